/**
 * One part of the exposition as the HTTP side serves it: its text's raw deflate blocks, length and CRC-32, and
 * its OpenMetrics form when that differs. Parts are prepared where the polling happens (src/collection/parts.ts)
 * and spliced into one body by src/metrics/exposition.ts; this module owns their shape.
 *
 * Each part's deflate stream is raw deflate ended by a sync flush (byte-aligned, not final, no reference into
 * other parts), so parts can be joined into one gzip member.
 */
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { counterHeaderEdits, crcOf, omChunks } from './openmetrics.js';
import type { OmEdit } from './openmetrics.js';
import type { TextSink } from './render.js';

/** A part ready to serve: its raw deflate blocks, and the length and CRC-32 of the text they hold. */
export interface PreparedPart {
  readonly name: string;
  /** Length in bytes of the text (the text itself is not kept: only its deflate crosses to the HTTP side). */
  readonly length: number;
  readonly deflated: Buffer;
  readonly crc: number;
  /** Its OpenMetrics form, when it differs (it holds a counter family): see OmPart. */
  readonly om?: OmPart | undefined;
}

/**
 * A part's OpenMetrics form (src/metrics/openmetrics.ts): the text with `edits` applied (its counters' HELP and
 * TYPE lines), and that text's raw deflate blocks and CRC-32. The deflate of the text between the edits is shared
 * with the text form (see preparePart), so the second form costs the deflate of a few header lines.
 */
export interface OmPart {
  readonly edits: readonly OmEdit[];
  readonly deflated: Buffer;
  readonly crc: number;
}

/** A Buffer that owns its whole ArrayBuffer (so it can be transferred without detaching anything else). */
function owned(b: Buffer): Buffer {
  if (b.byteOffset === 0 && b.buffer.byteLength === b.length) return b;
  const copy = Buffer.from(new ArrayBuffer(b.length));
  b.copy(copy);
  return copy;
}

/** Raw deflate of one part, ended by a sync flush so more blocks may follow. */
export function deflatePart(plain: Uint8Array): Buffer {
  return deflateRawSync(plain, { level: 6, finishFlush: constants.Z_SYNC_FLUSH });
}

/**
 * The deflate blocks of `plain` in both forms, each ended by a sync flush (as parts are: see exposition.ts), in text
 * order [body, header, body, header, …, body]: the headers as they are (`text`) or with `edits` applied (`om`), the
 * bodies between them deflated once for both.
 */
function deflateForms(plain: Uint8Array, edits: readonly OmEdit[], text: Buffer[], om: Buffer[]): void {
  let at = 0;
  for (const e of edits) {
    const body = deflatePart(plain.subarray(at, e.start));
    text.push(body, deflatePart(plain.subarray(e.start, e.end)));
    om.push(body, deflatePart(e.text));
    at = e.end;
  }
  const rest = deflatePart(plain.subarray(at));
  text.push(rest);
  om.push(rest);
}

/** A part from its text (read here, not kept). */
export function preparePart(name: string, text: string | Buffer): PreparedPart {
  const plain = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const edits = counterHeaderEdits(plain);
  if (edits.length === 0) return { name, length: plain.length, deflated: owned(deflatePart(plain)), crc: crc32(plain) };
  const textBlocks: Buffer[] = [];
  const omBlocks: Buffer[] = [];
  deflateForms(plain, edits, textBlocks, omBlocks);
  return {
    name,
    length: plain.length,
    deflated: owned(Buffer.concat(textBlocks)),
    crc: crc32(plain),
    om: { edits, deflated: owned(Buffer.concat(omBlocks)), crc: crcOf(omChunks(plain, edits)) },
  };
}

/** How much of a part's text PartWriter holds before it deflates it. */
export const PIECE_BYTES = 1 << 20;

/** What PartWriter's buffer starts at, doubling up to a piece. */
const FIRST_PIECE_BYTES = 64 * 1024;

/**
 * A part written as it is rendered: its text is deflated a piece at a time, so the whole text (megabytes for a large
 * cluster's bucket statistics) is never in memory at once. The part is the one preparePart makes of the whole text:
 * the same length, CRC-32, OpenMetrics edits (at their places in the whole text) and deflated text, in more blocks.
 * A piece ends between two writes, and the renderer writes a family's HELP and TYPE lines in one, so an edit never
 * spans two pieces.
 */
export class PartWriter implements TextSink {
  private buf: Buffer;
  private at = 0;
  /** Bytes of text deflated so far. */
  private done = 0;
  private crc = 0;
  private omCrc = 0;
  private readonly text: Buffer[] = [];
  private readonly om: Buffer[] = [];
  private readonly edits: OmEdit[] = [];

  constructor(private readonly pieceBytes = PIECE_BYTES) {
    // A small part (most collectors' are a few KB) never takes a whole piece.
    this.buf = Buffer.allocUnsafeSlow(Math.min(FIRST_PIECE_BYTES, pieceBytes));
  }

  /** Bytes of text written. */
  get length(): number {
    return this.done + this.at;
  }

  write(s: string): void {
    // A UTF-16 unit is at most 3 UTF-8 bytes: most writes need no exact length.
    if (s.length * 3 <= this.buf.length - this.at) {
      this.at += this.buf.write(s, this.at, 'utf8');
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    if (n > this.buf.length - this.at) {
      if (this.at + n <= this.pieceBytes) {
        // The first piece grows to a whole one before anything is deflated.
        const next = Buffer.allocUnsafeSlow(Math.min(this.pieceBytes, Math.max(this.at + n, this.buf.length * 2)));
        this.buf.copy(next, 0, 0, this.at);
        this.buf = next;
      } else {
        this.flush();
        // One write longer than a piece (a set's kept text) is a piece of its own size.
        if (n > this.buf.length) this.buf = Buffer.allocUnsafeSlow(Math.max(n, this.pieceBytes));
      }
    }
    this.at += this.buf.write(s, this.at, 'utf8');
  }

  /** The part, or undefined when nothing was written. */
  finish(name: string): PreparedPart | undefined {
    this.flush();
    if (this.done === 0) return undefined;
    const deflated = owned(Buffer.concat(this.text));
    if (this.edits.length === 0) return { name, length: this.done, deflated, crc: this.crc };
    return { name, length: this.done, deflated, crc: this.crc, om: { edits: this.edits, deflated: owned(Buffer.concat(this.om)), crc: this.omCrc } };
  }

  /** Deflate the text held (both forms, as preparePart does), and start the next piece. */
  private flush(): void {
    if (this.at === 0) return;
    const piece = this.buf.subarray(0, this.at);
    this.crc = crc32(piece, this.crc);
    const edits = counterHeaderEdits(piece);
    deflateForms(piece, edits, this.text, this.om);
    for (const e of edits) this.edits.push({ start: this.done + e.start, end: this.done + e.end, text: e.text });
    for (const c of omChunks(piece, edits)) this.omCrc = crc32(c, this.omCrc);
    this.done += this.at;
    this.at = 0;
    if (this.buf.length > this.pieceBytes) this.buf = Buffer.allocUnsafeSlow(this.pieceBytes);
  }
}

/** prom-client's text, with the blank lines between its metrics removed and a final newline. */
export function tidy(text: string): string {
  const t = text.replace(/\n\n+/g, '\n');
  return t.endsWith('\n') || t === '' ? t : `${t}\n`;
}

/**
 * The OpenMetrics 1.0 form of an exposition, derived from its Prometheus text form without rendering again.
 *
 * For what cbwatch exposes (gauges, counters, and prom-client's histograms), the two forms differ only where
 * prom-client's registry makes them differ, and test/metrics/openmetrics.test.ts holds them to its bytes:
 * - a counter family is named without `_total` in its HELP and TYPE lines (`# TYPE cbwatch_x counter`), its
 *   samples keep it (`cbwatch_x_total{…} 1`);
 * - the exposition ends with `# EOF`.
 * Nothing else moves: gauges and histograms, label escaping and values are the same bytes. prom-client writes no
 * `# UNIT` lines and has no info or stateset type (cbwatch's `_info` and one-hot families are gauges), so neither
 * does this.
 *
 * So a part's OpenMetrics form is its text with a few header lines replaced: edits (byte ranges and their
 * replacement) found once when the part is prepared. The series lines, most of the bytes, are shared.
 */
import { crc32 } from 'node:zlib';

export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** The last line of an OpenMetrics exposition. */
export const EOF_LINE = Buffer.from('# EOF\n');

/** Bytes `start..end` of a part's text are `text` in its OpenMetrics form (a counter's HELP and TYPE lines). */
export interface OmEdit {
  readonly start: number;
  readonly end: number;
  readonly text: Uint8Array;
}

const TYPE = Buffer.from('# TYPE ');
const COUNTER = ' counter';
const NL = 0x0a;

function asBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** A Buffer over an ArrayBuffer of its own (cloned or transferred alone between threads). */
function ownBuffer(s: string): Buffer {
  const b = Buffer.from(new ArrayBuffer(Buffer.byteLength(s)));
  b.write(s, 'utf8');
  return b;
}

/**
 * The edits that turn exposition text (one HELP line right before each TYPE line, as cbwatch's renderer and
 * prom-client write them) into OpenMetrics: one per counter family. A raw newline only ends a line (label values
 * and HELP text escape theirs), so `# TYPE ` at a line start is a TYPE line.
 */
export function counterHeaderEdits(text: Uint8Array): OmEdit[] {
  const buf = asBuffer(text);
  const edits: OmEdit[] = [];
  let i = 0;
  while ((i = buf.indexOf(TYPE, i)) !== -1) {
    const eol = buf.indexOf(NL, i);
    const end = eol === -1 ? buf.length : eol + 1;
    if (i > 0 && buf[i - 1] !== NL) {
      i = end;
      continue;
    }
    const line = buf.toString('utf8', i + TYPE.length, eol === -1 ? buf.length : eol);
    if (line.endsWith(COUNTER)) {
      const name = line.slice(0, -COUNTER.length);
      const base = name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
      // The HELP line before it, when it is this family's (a negative offset would search from the end).
      const helpStart = i >= 2 ? buf.lastIndexOf(NL, i - 2) + 1 : i;
      const help = buf.toString('utf8', helpStart, i);
      const helpPrefix = `# HELP ${name} `;
      const hasHelp = helpStart < i && help.startsWith(helpPrefix);
      const start = hasHelp ? helpStart : i;
      const om = `${hasHelp ? `# HELP ${base} ${help.slice(helpPrefix.length)}` : ''}# TYPE ${base} counter\n`;
      edits.push({ start, end, text: ownBuffer(om) });
    }
    i = end;
  }
  return edits;
}

/** The OpenMetrics form of a part's text as buffers to write in order (views on `plain`, and the edits). */
export function omChunks(plain: Uint8Array, edits: readonly OmEdit[]): Uint8Array[] {
  if (edits.length === 0) return [plain];
  const out: Uint8Array[] = [];
  let at = 0;
  for (const e of edits) {
    if (e.start > at) out.push(plain.subarray(at, e.start));
    out.push(e.text);
    at = e.end;
  }
  if (at < plain.length) out.push(plain.subarray(at));
  return out;
}

/** Length in bytes of the OpenMetrics form of a text `length` bytes long. */
export function omLength(length: number, edits: readonly OmEdit[]): number {
  let n = length;
  for (const e of edits) n += e.text.length - (e.end - e.start);
  return n;
}

/** CRC-32 of buffers written one after the other. */
export function crcOf(chunks: readonly Uint8Array[]): number {
  let c = 0;
  for (const b of chunks) c = crc32(b, c);
  return c;
}

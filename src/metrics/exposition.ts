/**
 * The /metrics body, from parts prepared ahead of the scrape. A scrape is a write of buffers already made.
 *
 * - Collector parts (one per collector, spanning every cluster) and the Couchbase request metrics come
 *   prepared from the collection side (src/collection/parts.ts): text, raw deflate blocks and CRC-32, rendered
 *   after the poll in the collection worker (on this thread with --collection.inline), so a scrape never renders series.
 * - The status families and build info are rendered here from the statuses (a few kilobytes, once per
 *   change), so a collection worker that died still shows as failed collectors.
 * - Live self-metrics (webhooks) once per change; process metrics and the count of requests served at most once
 *   a second (every scrape changes that count: rendered per change, each scrape would render and join anew).
 *
 * Collector parts arrive deflated only; a scrape without gzip inflates them (src/metrics/plain-forms.ts). The
 * plain parts stay separate buffers; joining them would copy the whole exposition (megabytes). The gzip body (a twentieth of the size) is joined once per change and written as one buffer. It is
 * spliced as ONE gzip member (curl and some browsers decode only the first member of a
 * multi-member file): a gzip header, each part's raw deflate stream ended with a sync flush (byte-aligned,
 * not final, no back-references into the other parts), an empty final block, and the CRC-32 and length of
 * the whole. The CRC of the whole is combined from the parts' own CRCs (src/metrics/crc32.ts), so a scrape
 * reads none of the snapshot's bytes.
 */
import { constants, crc32, deflateRawSync } from 'node:zlib';
import type { OmPart, PreparedPart } from './part.js';
import { tidy } from './part.js';
import { EOF_LINE, counterHeaderEdits, crcOf, omChunks, omLength } from './openmetrics.js';
import { buildInfoSet } from './build.js';
import { crc32Combine } from './crc32.js';
import { processRegistry } from './process.js';
import { renderSets } from './render.js';
import { PlainForms } from './plain-forms.js';
import { liveSelfVersion, selfRegistry, servedMetricsVersion, servedRegistry } from './self.js';
import type { CollectorStatus } from './store.js';
import { statusSet } from './store.js';

/** A part made on this thread: deflate and CRC computed on the first gzip scrape that needs them. */
class LocalPart {
  private deflatedMemo: Buffer | undefined;
  private crcMemo: number | undefined;
  private omMemo: OmPart | null | undefined;

  constructor(
    readonly key: string,
    readonly plain: Buffer,
  ) {}

  get length(): number {
    return this.plain.length;
  }

  get deflated(): Buffer {
    this.deflatedMemo ??= deflateRawSync(this.plain, { level: 6, finishFlush: constants.Z_SYNC_FLUSH });
    return this.deflatedMemo;
  }

  get crc(): number {
    this.crcMemo ??= crc32(this.plain);
    return this.crcMemo;
  }

  /** The OpenMetrics form when it differs (a few kilobytes: made whole on the first OpenMetrics scrape). */
  get om(): OmPart | undefined {
    if (this.omMemo === undefined) {
      const edits = counterHeaderEdits(this.plain);
      if (edits.length === 0) this.omMemo = null;
      else {
        const chunks = omChunks(this.plain, edits);
        this.omMemo = { edits, deflated: deflateRawSync(Buffer.concat(chunks), { level: 6, finishFlush: constants.Z_SYNC_FLUSH }), crc: crcOf(chunks) };
      }
    }
    return this.omMemo ?? undefined;
  }
}

/** A part of either kind: a collector's (deflated only) or one made here (its text at hand). */
type AnyPart = Pick<PreparedPart, 'length' | 'deflated' | 'crc' | 'om'> & { readonly plain?: Buffer };

/** What the gzip splice needs of a part in one format. */
interface Deflated {
  readonly length: number;
  readonly crc: number;
  readonly deflated: Uint8Array;
}

/** A part in the format asked for. */
function inFormat(p: AnyPart, openMetrics: boolean): Deflated {
  const om = openMetrics ? p.om : undefined;
  if (om === undefined) return { length: p.length, crc: p.crc, deflated: p.deflated };
  return { length: omLength(p.length, om.edits), crc: om.crc, deflated: om.deflated };
}

/** The `# EOF` line that ends an OpenMetrics exposition, as a part. */
const EOF_PART = new LocalPart('eof', EOF_LINE);

/** Header of a gzip member: magic, deflate, no flags, no mtime, no extra flags, OS unknown (RFC 1952). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final deflate block (BFINAL=1, fixed Huffman, end-of-block). */
const FINAL_BLOCK = deflateRawSync(Buffer.alloc(0));

/** One gzip member over several parts, each part's deflate output reused (see the module comment). */
function gzipParts(parts: readonly Deflated[]): Uint8Array[] {
  let crc = 0;
  let size = 0;
  for (const p of parts) {
    crc = crc32Combine(crc, p.crc, p.length);
    size += p.length;
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(size % 2 ** 32, 4);
  return [GZIP_HEADER, ...parts.map((p) => p.deflated), FINAL_BLOCK, trailer];
}

const EMPTY = new LocalPart('', Buffer.alloc(0));

/** A /metrics body as buffers to write in order, and their total length. */
export interface Body {
  readonly chunks: readonly Uint8Array[];
  readonly length: number;
}

/** Where the collector parts and statuses come from (src/collection/view.ts). */
export interface PartsSource {
  readonly statusVersion: number;
  parts(): readonly PreparedPart[];
  statusList(): CollectorStatus[];
  /** In-process collection only: prepare pending changes now, so a scrape right after a change sees it. */
  flush?(): Promise<void>;
}

export class Exposition {
  private status = EMPTY;
  private live = EMPTY;
  private proc = EMPTY;
  private served = EMPTY;
  /** servedMetricsVersion() when `served` was rendered. */
  private servedSeen = -1;
  private pending: Promise<void> | undefined;
  /**
   * The last gzip body, joined, and the deflated buffers it was made of (not the parts: a part replaced by a poll
   * must not be kept alive by this memo until the next gzip scrape, see src/collection/release.ts).
   */
  private gz: { readonly of: readonly Uint8Array[]; readonly body: Buffer } | undefined;
  /** The same for the OpenMetrics gzip body. */
  private gzOm: { readonly of: readonly Uint8Array[]; readonly body: Buffer } | undefined;
  /** The text of collector parts, for scrapes without gzip. */
  private readonly plainForms = new PlainForms();

  constructor(
    private readonly source: PartsSource,
    private readonly opts: { processMetrics?: boolean } = {},
  ) {}

  /**
   * The full exposition; `gzip` asks for the compressed bytes, `openMetrics` for the OpenMetrics form (each part's
   * prepared edits applied, `# EOF` at the end: nothing is rendered again).
   */
  async body(gzip: boolean, openMetrics = false): Promise<Body> {
    await this.source.flush?.();
    await this.refresh();
    const parts: AnyPart[] = [...this.source.parts(), this.status, this.live, this.served, this.proc].filter((p) => p.length > 0);
    if (openMetrics) parts.push(EOF_PART);
    if (gzip) {
      // The gzip body is small (a few hundred kilobytes at a hundred buckets): joined once per change (at most
      // about once a second, when process metrics move) and written as one buffer, as a static file would be,
      // rather than as a dozen writes per scrape.
      const views = parts.map((p) => inFormat(p, openMetrics));
      const memo = openMetrics ? this.gzOm : this.gz;
      if (memo === undefined || memo.of.length !== views.length || memo.of.some((d, i) => d !== views[i]?.deflated)) {
        const made = { of: views.map((v) => v.deflated), body: Buffer.concat(gzipParts(views)) };
        if (openMetrics) this.gzOm = made;
        else this.gz = made;
      }
      const body = ((openMetrics ? this.gzOm : this.gz) as { body: Buffer }).body;
      return { chunks: [body], length: body.length };
    }
    const inflated = await this.plainForms.of(parts.filter((p) => p.plain === undefined));
    let next = 0;
    const texts = parts.map((p) => p.plain ?? (inflated[next++] as Buffer));
    const chunks = openMetrics ? parts.flatMap((p, i) => (p.om === undefined ? [texts[i] as Buffer] : omChunks(texts[i] as Buffer, p.om.edits))) : texts;
    return { chunks, length: chunks.reduce((n, c) => n + c.length, 0) };
  }

  /** The plain exposition as one string (tests and tools; scrapes use `body`). */
  async text(openMetrics = false): Promise<string> {
    return Buffer.concat((await this.body(false, openMetrics)).chunks).toString('utf8');
  }

  private async refresh(): Promise<void> {
    // Single flight: concurrent scrapes share one render of the small parts.
    while (this.pending) await this.pending;
    const statusKey = String(this.source.statusVersion);
    const liveKey = String(liveSelfVersion());
    const procKey = this.opts.processMetrics === false ? 'off' : String(Math.floor(Date.now() / 1000));
    const servedVersion = servedMetricsVersion();
    const servedKey = servedVersion === this.servedSeen ? this.served.key : String(Math.floor(Date.now() / 1000));
    if (statusKey === this.status.key && liveKey === this.live.key && procKey === this.proc.key && servedKey === this.served.key) return;
    this.pending = (async () => {
      if (statusKey !== this.status.key) {
        const text = renderSets([{ base: {}, set: statusSet(this.source.statusList()) }, { base: {}, set: buildInfoSet() }]);
        this.status = new LocalPart(statusKey, Buffer.from(text));
      }
      if (liveKey !== this.live.key) {
        this.live = new LocalPart(liveKey, Buffer.from(tidy(await selfRegistry.metrics())));
      }
      if (servedKey !== this.served.key) {
        this.servedSeen = servedVersion;
        this.served = new LocalPart(servedKey, Buffer.from(tidy(await servedRegistry.metrics())));
      }
      if (procKey !== this.proc.key) {
        this.proc = new LocalPart(procKey, procKey === 'off' ? Buffer.alloc(0) : Buffer.from(tidy(await processRegistry.metrics())));
      }
    })();
    try {
      await this.pending;
    } finally {
      this.pending = undefined;
    }
  }
}

/**
 * The /metrics body, memoised: the snapshot part is rendered at most once per store version, the live
 * self-metrics once per change, process metrics at most once a second. A scrape is then a write of buffers
 * already made.
 *
 * The three parts stay separate buffers. Joining them would copy the whole exposition (megabytes at a
 * hundred buckets) every second, because process metrics change every second; those copies are off-heap
 * garbage that lifts resident memory well above what the exporter holds.
 *
 * The gzip body is spliced the same way, as ONE gzip member (curl and some browsers decode only the first
 * member of a multi-member file): a gzip header, each part's raw deflate stream ended with a sync flush
 * (byte-aligned, not final, no back-references into the other parts), an empty final block, and the CRC-32
 * and length of the whole. Each part's deflate output and the snapshot's CRC are memoised, so a scrape
 * compresses only the few kilobytes that change every second, not the megabytes of the snapshot.
 */
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { buildInfoSet } from './build.js';
import { processRegistry } from './process.js';
import { renderSets } from './render.js';
import { liveSelfVersion, selfRegistry } from './self.js';
import type { SnapshotStore } from './store.js';

class Part {
  private deflated: Buffer | undefined;
  private crcMemo: { readonly from: number; readonly crc: number } | undefined;

  constructor(
    readonly key: string,
    readonly plain: Buffer,
  ) {}

  /** Raw deflate blocks of this part alone, ended by a sync flush so more blocks may follow. */
  deflate(): Buffer {
    this.deflated ??= deflateRawSync(this.plain, { level: 6, finishFlush: constants.Z_SYNC_FLUSH });
    return this.deflated;
  }

  /** CRC-32 continued over this part from the CRC of what precedes it (the snapshot, first, always from 0). */
  crc(from: number): number {
    if (this.crcMemo?.from !== from) this.crcMemo = { from, crc: crc32(this.plain, from) };
    return this.crcMemo.crc;
  }
}

/** Header of a gzip member: magic, deflate, no flags, no mtime, no extra flags, OS unknown (RFC 1952). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final deflate block (BFINAL=1, fixed Huffman, end-of-block). */
const FINAL_BLOCK = deflateRawSync(Buffer.alloc(0));

/** One gzip member over several parts, each part's deflate output reused (see the module comment). */
function gzipParts(parts: readonly Part[]): Buffer[] {
  let crc = 0;
  let size = 0;
  for (const p of parts) {
    crc = p.crc(crc);
    size += p.plain.length;
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(size % 2 ** 32, 4);
  return [GZIP_HEADER, ...parts.map((p) => p.deflate()), FINAL_BLOCK, trailer];
}

const EMPTY = new Part('', Buffer.alloc(0));

/** How long eager mode waits after a change before rendering, to share one render among polls ending together. */
const WARM_DELAY_MS = 50;

/** A /metrics body as buffers to write in order, and their total length. */
export interface Body {
  readonly chunks: readonly Buffer[];
  readonly length: number;
}

export class Exposition {
  private snap = EMPTY;
  private live = EMPTY;
  private proc = EMPTY;
  private pending: Promise<void> | undefined;

  private warmTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: SnapshotStore,
    private readonly opts: { processMetrics?: boolean; eager?: boolean } = {},
  ) {
    if (opts.eager) store.onChange(() => this.warmSoon());
  }

  /**
   * Eager mode renders a changed snapshot shortly after the change (polls that end together share one
   * render), so the scrape after a poll finds the body ready instead of paying for the render; a scrape
   * that arrives mid-render still waits for it, and never gets the older body.
   */
  private warmSoon(): void {
    if (this.warmTimer !== undefined) return;
    this.warmTimer = setTimeout(() => {
      this.warmTimer = undefined;
      // A failure here resurfaces on the next scrape, which renders again.
      this.refresh().catch(() => undefined);
    }, WARM_DELAY_MS);
    this.warmTimer.unref();
  }

  /** The full exposition; `gzip` asks for the compressed bytes. */
  async body(gzip: boolean): Promise<Body> {
    await this.refresh();
    const parts = [this.snap, this.live, this.proc].filter((p) => p.plain.length > 0);
    const chunks = gzip ? gzipParts(parts) : parts.map((p) => p.plain);
    return { chunks, length: chunks.reduce((n, c) => n + c.length, 0) };
  }

  /** The plain exposition as one string (tests and tools; scrapes use `body`). */
  async text(): Promise<string> {
    return Buffer.concat((await this.body(false)).chunks).toString('utf8');
  }

  private async refresh(): Promise<void> {
    // Single flight: concurrent scrapes share one render.
    while (this.pending) await this.pending;
    const snapKey = String(this.store.version);
    const liveKey = String(liveSelfVersion());
    const procKey = this.opts.processMetrics === false ? 'off' : String(Math.floor(Date.now() / 1000));
    if (snapKey === this.snap.key && liveKey === this.live.key && procKey === this.proc.key) return;
    this.pending = (async () => {
      if (snapKey !== this.snap.key) {
        const text = renderSets([...this.store.labelledSets(), { base: {}, set: buildInfoSet() }]);
        this.snap = new Part(snapKey, Buffer.from(text));
      }
      if (liveKey !== this.live.key) {
        this.live = new Part(liveKey, Buffer.from(tidy(await selfRegistry.metrics())));
      }
      if (procKey !== this.proc.key) {
        this.proc = new Part(procKey, procKey === 'off' ? Buffer.alloc(0) : Buffer.from(tidy(await processRegistry.metrics())));
      }
    })();
    try {
      await this.pending;
    } finally {
      this.pending = undefined;
    }
  }
}

function tidy(text: string): string {
  const t = text.replace(/\n\n+/g, '\n');
  return t.endsWith('\n') || t === '' ? t : `${t}\n`;
}

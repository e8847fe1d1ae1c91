/**
 * The /metrics body, memoised: the snapshot part is rendered at most once per store version, the live
 * self-metrics once per change, process metrics at most once a second. A scrape is then a buffer write
 * (and its gzip, also memoised).
 */
import { gzipSync } from 'node:zlib';
import { buildInfoSet } from './build.js';
import { processRegistry } from './process.js';
import { renderSets } from './render.js';
import { liveSelfVersion, selfRegistry } from './self.js';
import type { SnapshotStore } from './store.js';

interface Part {
  key: string;
  buf: Buffer;
}

export class Exposition {
  private snap: Part = { key: '', buf: Buffer.alloc(0) };
  private live: Part = { key: '', buf: Buffer.alloc(0) };
  private proc: Part = { key: '', buf: Buffer.alloc(0) };
  private whole: { key: string; plain: Buffer; gz?: Buffer } = { key: '', plain: Buffer.alloc(0) };
  private pending: Promise<void> | undefined;

  constructor(
    private readonly store: SnapshotStore,
    private readonly opts: { processMetrics?: boolean } = {},
  ) {}

  /** The full exposition; `gzip` asks for the compressed bytes. */
  async body(gzip: boolean): Promise<Buffer> {
    await this.refresh();
    if (!gzip) return this.whole.plain;
    this.whole.gz ??= gzipSync(this.whole.plain, { level: 6 });
    return this.whole.gz;
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
        const text = await renderSets([...this.store.labelledSets(), { base: {}, set: buildInfoSet() }]);
        this.snap = { key: snapKey, buf: Buffer.from(text) };
      }
      if (liveKey !== this.live.key) {
        this.live = { key: liveKey, buf: Buffer.from(tidy(await selfRegistry.metrics())) };
      }
      if (procKey !== this.proc.key) {
        this.proc = { key: procKey, buf: procKey === 'off' ? Buffer.alloc(0) : Buffer.from(tidy(await processRegistry.metrics())) };
      }
      const key = `${this.snap.key}/${this.live.key}/${this.proc.key}`;
      if (key !== this.whole.key) this.whole = { key, plain: Buffer.concat([this.snap.buf, this.live.buf, this.proc.buf]) };
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

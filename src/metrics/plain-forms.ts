/**
 * The text of collector parts, which the HTTP thread keeps deflated only (src/collection/parts.ts), for the
 * scrapes that do not take gzip.
 *
 * A part's deflate stream is raw deflate ended by a sync flush, so it inflates on its own. The text of the parts a
 * plain scrape needed is kept for KEEP_MS after the last such scrape (a person reloading the page, a client
 * scraping without gzip back to back), then dropped; a part replaced by a poll is dropped at the next plain scrape.
 * Inflating runs on libuv's thread pool, so gzip scrapes are served while a large part inflates.
 */
import { constants, inflateRaw } from 'node:zlib';
import type { InputType } from 'node:zlib';

/** How long the text of the parts stays after the last scrape that read it. */
export const KEEP_MS = 10_000;

/** What is inflated: the raw deflate bytes of one part, and the length of the text they hold. */
export interface DeflatedText {
  readonly deflated: Uint8Array;
  readonly length: number;
}

function inflate(d: DeflatedText): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // The stream is not final (no BFINAL block): a sync flush at its end, or zlib reports a truncated input.
    inflateRaw(d.deflated as InputType, { finishFlush: constants.Z_SYNC_FLUSH }, (err, out) => {
      if (err !== null) reject(err);
      else if (out.length !== d.length) reject(new Error(`a part inflated to ${out.length} bytes, not the ${d.length} it was made of`));
      else resolve(out);
    });
  });
}

export class PlainForms {
  /** The text of each part a plain scrape read, by its deflated bytes (a part replaced by a poll has new ones). */
  private kept = new Map<Uint8Array, Promise<Buffer>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly keepMs = KEEP_MS) {}

  /** The text of each part, in order; parts inflated at once by concurrent scrapes are inflated once. */
  async of(parts: readonly DeflatedText[]): Promise<Buffer[]> {
    const next = new Map<Uint8Array, Promise<Buffer>>();
    for (const p of parts) {
      const text = this.kept.get(p.deflated) ?? next.get(p.deflated) ?? this.inflated(p);
      next.set(p.deflated, text);
    }
    this.kept = next;
    this.keep();
    return Promise.all(parts.map((p) => next.get(p.deflated) as Promise<Buffer>));
  }

  private inflated(p: DeflatedText): Promise<Buffer> {
    const text = inflate(p);
    // A failed inflate is not kept: the next scrape tries again (this one fails).
    text.catch(() => {
      if (this.kept.get(p.deflated) === text) this.kept.delete(p.deflated);
    });
    return text;
  }

  /** Parts whose text is kept now (tests). */
  get size(): number {
    return this.kept.size;
  }

  /** Drop every text now. */
  clear(): void {
    this.kept = new Map();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private keep(): void {
    if (this.timer !== undefined) {
      this.timer.refresh();
      return;
    }
    this.timer = setTimeout(() => this.clear(), this.keepMs);
    this.timer.unref();
  }
}

/**
 * Exposition parts, prepared where the polling happens (the collection worker), so the thread that serves
 * HTTP only writes buffers.
 *
 * One part per collector, spanning every cluster: a family belongs to exactly one collector, so each family's
 * samples stay contiguous (one HELP/TYPE block) however many clusters there are. A poll marks its collector
 * dirty in the store; the next update re-renders that collector's part alone, from the per-set text the
 * renderer keeps (src/metrics/render.ts: the other clusters' sets are not formatted again), deflates it and
 * computes its CRC-32. A `tasks` poll therefore costs the few kilobytes of the tasks part, not the megabytes
 * of bucket statistics.
 *
 * Each part's deflate stream is raw deflate ended by a sync flush (byte-aligned, not final, no reference
 * into other parts), so the HTTP side can splice parts into one gzip member (src/metrics/exposition.ts).
 *
 * Only the deflated form crosses to the HTTP thread; the text is garbage here once deflated. Scrapers ask for
 * gzip (Prometheus always does), and the text was twenty times the deflated bytes: 3.3 MB of a realistic
 * scenario's resident memory (26 MB at 1,000 buckets), held for the rare scrape without gzip, which inflates
 * the parts it needs instead (src/metrics/plain-forms.ts).
 * The Couchbase request metrics (cbwatch_couchbase_request*) are observed where the clients run, and rendered here
 * as one more part.
 */
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { findProblems } from '../server/problems.js';
import type { Problem } from '../server/problems.js';
import type { CollectorStatus, SnapshotStore } from '../metrics/store.js';
import { counterHeaderEdits, crcOf, omChunks } from '../metrics/openmetrics.js';
import type { OmEdit } from '../metrics/openmetrics.js';
import { renderSetsBytes } from '../metrics/render.js';
import { requestMetricsText, requestMetricsVersion } from '../metrics/requests.js';

/** A part ready to serve: its raw deflate blocks, and the length and CRC-32 of the text they hold. */
export interface PreparedPart {
  readonly name: string;
  /** Length in bytes of the text (which is not kept: see the module comment). */
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

/** What changed since the previous update. */
export interface SnapshotUpdate {
  /** Every part there is now, in exposition order (parts not in `parts` are unchanged). */
  readonly order: readonly string[];
  /** The parts that changed. */
  readonly parts: readonly PreparedPart[];
  readonly statuses: readonly CollectorStatus[];
  /** What needs a look in the latest polls, for the landing page (computed where the samples are). */
  readonly problems?: readonly Problem[];
}

/** The name of the request-metrics part (sorts after every collector name). */
export const REQUESTS_PART = '~requests';

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

/** A part from its text (read here, not kept). */
export function preparePart(name: string, text: string | Buffer): PreparedPart {
  const plain = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const edits = counterHeaderEdits(plain);
  if (edits.length === 0) return { name, length: plain.length, deflated: owned(deflatePart(plain)), crc: crc32(plain) };
  // Both forms deflated piece by piece (each piece ended by a sync flush, as parts are: see exposition.ts), the
  // pieces between the edits once for both: [body, header, body, header, …, body].
  const bodies: Buffer[] = [];
  const textHeads: Buffer[] = [];
  const omHeads: Buffer[] = [];
  let at = 0;
  for (const e of edits) {
    bodies.push(deflatePart(plain.subarray(at, e.start)));
    textHeads.push(deflatePart(plain.subarray(e.start, e.end)));
    omHeads.push(deflatePart(e.text));
    at = e.end;
  }
  bodies.push(deflatePart(plain.subarray(at)));
  const interleave = (heads: readonly Buffer[]): Buffer => owned(Buffer.concat(bodies.flatMap((b, i) => (i < heads.length ? [b, heads[i] as Buffer] : [b]))));
  return {
    name,
    length: plain.length,
    deflated: interleave(textHeads),
    crc: crc32(plain),
    om: { edits, deflated: interleave(omHeads), crc: crcOf(omChunks(plain, edits)) },
  };
}

/** prom-client's text, with the blank lines between its metrics removed and a final newline. */
export function tidy(text: string): string {
  const t = text.replace(/\n\n+/g, '\n');
  return t.endsWith('\n') || t === '' ? t : `${t}\n`;
}

export class PartRenderer {
  /** Names of the parts that have text, in order. */
  private readonly present = new Set<string>();
  /** Each part's latest size in bytes: the next render's buffer is sized from it. */
  private readonly sizes = new Map<string, number>();
  private requestsSeen = -1;

  constructor(
    private readonly store: SnapshotStore,
    private readonly opts: { requestMetrics?: boolean } = {},
  ) {}

  /** Render what changed; `undefined` when nothing did (statuses included). */
  async update(force = false): Promise<SnapshotUpdate | undefined> {
    const dirty = this.store.takeDirty();
    const parts: PreparedPart[] = [];
    for (const name of dirty) {
      const last = this.sizes.get(name) ?? 0;
      // An eighth more than last time: a poll adds a few series at most, and a render that outgrows it grows.
      const plain = renderSetsBytes(this.store.collectorSets(name), last + last / 8);
      this.sizes.set(name, plain.length);
      if (plain.length === 0) {
        this.present.delete(name);
        continue;
      }
      this.present.add(name);
      parts.push(preparePart(name, plain));
    }
    if (this.opts.requestMetrics !== false && requestMetricsVersion() !== this.requestsSeen) {
      this.requestsSeen = requestMetricsVersion();
      const text = tidy(requestMetricsText());
      if (text === '') this.present.delete(REQUESTS_PART);
      else {
        this.present.add(REQUESTS_PART);
        parts.push(preparePart(REQUESTS_PART, text));
      }
    }
    const statusChanged = this.store.version !== this.statusSeen;
    this.statusSeen = this.store.version;
    if (!force && dirty.size === 0 && parts.length === 0 && !statusChanged) return undefined;
    return { order: [...this.present].sort(), parts, statuses: this.store.statusList(), problems: findProblems(this.store.labelledSets(), Date.now()) };
  }

  private statusSeen = -1;

  /** The buffers of an update, to transfer rather than copy to the HTTP thread. */
  static transferList(u: SnapshotUpdate): ArrayBuffer[] {
    const out: ArrayBuffer[] = [];
    for (const p of u.parts) {
      out.push(p.deflated.buffer as ArrayBuffer);
      if (p.om !== undefined) out.push(p.om.deflated.buffer as ArrayBuffer, ...p.om.edits.map((e) => e.text.buffer as ArrayBuffer));
    }
    return out;
  }
}

/**
 * Exposition parts, prepared where the polling happens (after each poll, on the collection's thread), so a
 * scrape only writes buffers.
 *
 * One part per collector, spanning every cluster: a family belongs to exactly one collector, so each family's
 * samples stay contiguous (one HELP/TYPE block) however many clusters there are. A poll marks its collector
 * dirty in the store; the next update re-renders that collector's part alone, from the per-set text the
 * renderer keeps (src/metrics/render.ts: the other clusters' sets are not formatted again), deflating it and
 * computing its CRC-32 a piece at a time as it is written (PartWriter). A `tasks` poll therefore costs the few kilobytes of the tasks part, not the megabytes
 * of bucket statistics.
 *
 * The part's shape and its deflate are the exposition's (src/metrics/part.ts). Only the deflated form crosses to
 * the HTTP thread; the text is garbage here once deflated. Scrapers ask for gzip (Prometheus always does), and a
 * scrape without gzip inflates the parts it needs instead (src/metrics/plain-forms.ts), so the text, many times
 * the deflated bytes, is not held for it.
 * The Couchbase request metrics (cbwatch_couchbase_request*) are observed where the clients run, and rendered here
 * as one more part.
 */
import { findProblems } from '../metrics/problems.js';
import type { Problem } from '../metrics/problems.js';
import type { CollectorStatus, SnapshotStore } from '../metrics/store.js';
import { PartWriter, preparePart, tidy } from '../metrics/part.js';
import type { PreparedPart } from '../metrics/part.js';
import { renderSetsTo } from '../metrics/render.js';
import { requestMetricsText, requestMetricsVersion } from '../metrics/requests.js';

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

export class PartRenderer {
  /** Names of the parts that have text, in order. */
  private readonly present = new Set<string>();
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
      // Deflated as it is rendered: the part's whole text is never held.
      const writer = new PartWriter();
      renderSetsTo(writer, this.store.collectorSets(name));
      const part = writer.finish(name);
      if (part === undefined) {
        this.present.delete(name);
        continue;
      }
      this.present.add(name);
      parts.push(part);
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

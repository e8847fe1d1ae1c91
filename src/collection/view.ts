/**
 * What the HTTP thread knows of the collection: the prepared exposition parts and the collector statuses,
 * as last sent by the collector side (the worker, or the in-process engine). Serves /-/ready, the landing
 * page and the status families; never renders or compresses a collector's series itself.
 */
import { markOverdue } from '../metrics/store.js';
import type { CollectorStatus } from '../metrics/store.js';
import { monotonicMs } from '../clock.js';
import type { Problem } from '../metrics/problems.js';
import type { PreparedPart } from '../metrics/part.js';
import type { SnapshotUpdate } from './parts.js';
import { RELEASE_AFTER_BYTES, ReleaseCounter, StartupRelease, collectSoon } from './release.js';

/** What the HTTP app needs of the collection state. */
export interface StatusSource {
  statusList(): CollectorStatus[];
  allPolledOnce(): boolean;
  /** What needs a look in the latest polls (the landing page); absent where nothing computes it. */
  problems?(): readonly Problem[];
}

export class SnapshotView implements StatusSource {
  private partsByName = new Map<string, PreparedPart>();
  private ordered: PreparedPart[] = [];
  private statuses: CollectorStatus[] = [];
  private latestProblems: readonly Problem[] = [];
  private partsV = 0;
  private statusV = 0;
  /** Whether the collector side has reported at least once (seeded statuses are only a list of names). */
  private known = false;
  /** Replaced parts' bytes, freed by an early collection (src/collection/release.ts). */
  private readonly release: ReleaseCounter;

  /** The statuses found overdue at the last look (cluster\0collector), and a counter that moves when they change. */
  private overdueKey = '';
  private overdueV = 0;
  private readonly clock: () => number;
  /** The wall clock, epoch ms: a scheduled collector's slot is a wall-clock instant (markOverdue). */
  private readonly wall: () => number;

  /** Once every collector has polled once, this thread's start-up is over (src/collection/release.ts). */
  private readonly startup: StartupRelease;

  constructor(release: ReleaseCounter = new ReleaseCounter(RELEASE_AFTER_BYTES, () => collectSoon(true)), clock: () => number = monotonicMs, wall: () => number = Date.now) {
    this.release = release;
    this.wall = wall;
    this.startup = new StartupRelease(release);
    this.clock = clock;
  }

  /** The statuses as the collector side last sent them (LocalView reads its store instead). */
  protected rawStatusList(): CollectorStatus[] {
    return this.statuses;
  }

  protected rawStatusVersion(): number {
    return this.statusV;
  }

  /** The statuses with the overdue ones marked failed (src/metrics/store.ts, markOverdue), as of now. */
  private current(): CollectorStatus[] {
    const list = markOverdue(this.rawStatusList(), this.clock(), this.wall());
    const key = list.flatMap((s) => (s.overdue ? [`${s.cluster}\u0000${s.collector}`] : [])).join('\u0001');
    if (key !== this.overdueKey) {
      this.overdueKey = key;
      this.overdueV++;
    }
    return list;
  }

  private replaced(p: PreparedPart | undefined): void {
    if (p !== undefined) this.release.count(p.deflated.byteLength + (p.om?.deflated.byteLength ?? 0));
  }

  /** Moves whenever the parts change. */
  get partsVersion(): number {
    return this.partsV;
  }

  /** Moves whenever the statuses change, and when a collector becomes overdue or polls again. */
  get statusVersion(): number {
    this.current();
    // Both counters only grow: their sum moves whenever either does.
    return this.rawStatusVersion() + this.overdueV;
  }

  /**
   * Collector parts in exposition order. A collector overdue on every cluster it polls has its part withheld:
   * its values are as old as its last poll. (A part spans the clusters; one overdue beside others that poll keeps
   * it: in a running collection thread a single job cannot stall while the others tick.)
   */
  parts(): readonly PreparedPart[] {
    const list = this.current();
    if (!list.some((s) => s.overdue)) return this.ordered;
    const live = new Set(list.flatMap((s) => (s.overdue ? [] : [s.collector])));
    const stalled = new Set(list.flatMap((s) => (s.overdue && !live.has(s.collector) ? [s.collector] : [])));
    return this.ordered.filter((p) => !stalled.has(p.name));
  }

  statusList(): CollectorStatus[] {
    return this.current();
  }

  problems(): readonly Problem[] {
    return this.latestProblems;
  }

  /** True once every known collector has finished its first poll, whatever its outcome. */
  allPolledOnce(): boolean {
    return this.known && this.statuses.every((s) => s.ok !== undefined);
  }

  /** The collectors expected, before the collector side reports (the landing page lists them as pending). */
  seed(statuses: readonly CollectorStatus[]): void {
    this.statuses = [...statuses];
    this.statusV++;
  }

  apply(u: SnapshotUpdate): void {
    this.known = true;
    for (const p of u.parts) {
      this.replaced(this.partsByName.get(p.name));
      this.partsByName.set(p.name, p);
    }
    const keep = new Set(u.order);
    for (const name of [...this.partsByName.keys()]) {
      if (keep.has(name)) continue;
      this.replaced(this.partsByName.get(name));
      this.partsByName.delete(name);
    }
    this.ordered = u.order.flatMap((n) => {
      const p = this.partsByName.get(n);
      return p ? [p] : [];
    });
    this.partsV++;
    if (u.problems !== undefined) this.latestProblems = u.problems;
    // A restarted worker announces its collectors as not yet polled; until it has polled them, they keep the
    // failure recorded when the previous worker died (readiness does not flap, the failure stays visible).
    const prev = new Map(this.statuses.map((s) => [`${s.cluster}\u0000${s.collector}`, s]));
    this.statuses = u.statuses.map((s) => (s.ok === undefined ? (prev.get(`${s.cluster}\u0000${s.collector}`) ?? s) : s));
    this.statusV++;
    if (this.allPolledOnce()) this.startup.over();
  }

  /**
   * The collector side is gone (the worker crashed or exited): drop every series it prepared — nothing stale
   * is served as fresh — and mark every collector failed with `reason`.
   */
  failAll(reason: string, now = Date.now()): void {
    this.known = true;
    for (const p of this.partsByName.values()) this.replaced(p);
    this.partsByName.clear();
    this.ordered = [];
    this.latestProblems = [];
    this.partsV++;
    this.statuses = this.statuses.map((s) => ({
      ...s,
      ok: false,
      lastError: reason,
      lastPollAt: now,
      series: 0,
      notApplicable: undefined,
      reached: false,
      // The probe ran in the worker that is gone: until a new one probes, the cluster's reachability is unknown.
      probeReached: undefined,
    }));
    this.statusV++;
  }
}

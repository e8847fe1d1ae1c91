/**
 * The snapshot store: the latest result of every (cluster, collector), swapped atomically per poll.
 * A failed poll drops that collector's series — nothing stale is served as fresh — and its status says why.
 * `version` moves on every change; `takeDirty()` names the collectors whose series changed since the last
 * call, so the part renderer (src/collection/parts.ts) re-renders only those.
 */
import type { PollOutcome } from '../collectors/context.js';
import { describeError } from '../errors.js';
import { monotonicMs } from '../clock.js';
import { CAP_WHATS, MAX_GAP_NODES, SampleSet } from './family.js';
import type { LabelledSet } from './render.js';
import { SELF } from './self-families.js';

export interface CollectorStatus {
  readonly cluster: string;
  readonly collector: string;
  /** Undefined until the first poll finished. */
  readonly ok: boolean | undefined;
  readonly lastError: string | undefined;
  readonly lastDurationSeconds: number | undefined;
  /** Epoch ms of the last successful poll. */
  readonly lastSuccessAt: number | undefined;
  readonly lastPollAt: number | undefined;
  readonly series: number;
  readonly requests: number;
  readonly skipped: ReadonlyMap<string, number>;
  /** Failed items since start, reason → count (a counter: it only grows). */
  readonly itemErrors: ReadonlyMap<string, number>;
  /** Values refused by the numeric guard since start, reason → count (a counter). */
  readonly droppedValues: ReadonlyMap<string, number>;
  /** What the caps on upstream-named data left out or shortened since start, what → count (a counter). */
  readonly capped?: ReadonlyMap<string, number>;
  /** Nodes missing from the last poll's range API answer (undefined: the poll failed or did not read the range API). */
  readonly statsNodesMissing?: number | undefined;
  /** Statistics points from a node's future dropped since start, node → count (a counter). */
  readonly futurePointsDropped?: ReadonlyMap<string, number>;
  readonly notApplicable: string | undefined;
  /** What the collector noted about its last poll (e.g. the statistics source in use). */
  readonly note?: string | undefined;
  /** Missing permission named by a 403, for `check` and the landing page. */
  readonly missingPermissions: readonly string[];
  /** Whether any request of the last poll got a 2xx answer. */
  readonly reached: boolean;
  /** The scheduler's backoff beyond the interval, seconds (0: none); filled in by `statusList()`. */
  readonly backoffSeconds?: number;
  /** The cluster's latest reachability probe (undefined before the first); filled in by `statusList()`. */
  readonly probeReached?: boolean | undefined;
  /** The collector's configured interval and poll deadline, seconds (`cbwatch_collector_interval_seconds`). */
  readonly intervalSeconds?: number;
  readonly timeoutSeconds?: number;
  /**
   * When the last poll finished (or the collector was registered, before its first), on the process's monotonic
   * clock (src/scheduler/clock.ts): what `markOverdue` measures, wherever the status is served.
   */
  readonly lastPollMonoMs?: number;
  /** Set by `markOverdue`: no poll has finished for longer than the collector's schedule allows. */
  readonly overdue?: boolean;
  /** A collector polled at cron slots (`schedule`, src/cron.ts) instead of an interval: its expression and zone. */
  readonly schedule?: { readonly expression: string; readonly timezone: string | undefined };
  /**
   * A scheduled collector's next slot: its wall-clock time (epoch ms, `cbwatch_collector_next_slot_timestamp_seconds`)
   * and, as the scheduler planned it, the same instant on the monotonic clock. Planned again after every poll.
   */
  readonly nextSlotAt?: number;
  readonly nextSlotMonoMs?: number;
}

/** The status of a (cluster, collector) announced but not polled yet. */
export function pendingStatus(cluster: string, collector: string): CollectorStatus {
  return {
    cluster,
    collector,
    ok: undefined,
    lastError: undefined,
    lastDurationSeconds: undefined,
    lastSuccessAt: undefined,
    lastPollAt: undefined,
    series: 0,
    requests: 0,
    skipped: new Map(),
    itemErrors: new Map(),
    droppedValues: new Map(),
    notApplicable: undefined,
    missingPermissions: [],
    reached: false,
  };
}

function key(cluster: string, collector: string): string {
  return `${cluster}\u0000${collector}`;
}

export class SnapshotStore {
  private readonly sets = new Map<string, SampleSet>();
  private readonly statuses = new Map<string, CollectorStatus>();
  private readonly clusterOrder: string[] = [];
  /** Extra delay of each (cluster, collector)'s next poll, seconds (the scheduler's timeout backoff). */
  private readonly backoffs = new Map<string, number>();
  /** Latest reachability probe per cluster (the scheduler's own small job). */
  private readonly probes = new Map<string, boolean>();
  private v = 0;
  /** Collectors whose series changed since the last takeDirty(). */
  private dirty = new Set<string>();

  private readonly listeners: Array<() => void> = [];

  get version(): number {
    return this.v;
  }

  /** Call `fn` after every change (the exposition renders ahead of the next scrape). */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  private changed(): void {
    this.v++;
    for (const fn of this.listeners) fn();
  }

  /**
   * Announce a (cluster, collector) before its first poll, so status and readiness know about it; `timing` (its
   * interval and deadline) is what an overdue poll is measured against. A reload that changed them registers again.
   */
  register(
    cluster: string,
    collector: string,
    timing?: { readonly intervalMs: number; readonly timeoutMs: number; readonly schedule?: { readonly expression: string; readonly timezone: string | undefined } | undefined },
  ): void {
    const k = key(cluster, collector);
    if (!this.clusterOrder.includes(cluster)) this.clusterOrder.push(cluster);
    const prev = this.statuses.get(k);
    const { intervalSeconds: _i, schedule: _s, nextSlotAt: _n, nextSlotMonoMs: _m, ...rest } = prev ?? pendingStatus(cluster, collector);
    const t =
      timing === undefined
        ? {}
        : timing.schedule === undefined
          ? { intervalSeconds: timing.intervalMs / 1000, timeoutSeconds: timing.timeoutMs / 1000 }
          : { schedule: timing.schedule, timeoutSeconds: timing.timeoutMs / 1000 };
    // A replaced job starts its schedule again now: its overdue clock too.
    this.statuses.set(k, { ...rest, ...t, lastPollMonoMs: monotonicMs() });
    this.changed();
  }

  /** Replace the collector's snapshot with the outcome of a poll. */
  record(cluster: string, outcome: PollOutcome): void {
    const k = key(cluster, outcome.collector);
    const prev = this.statuses.get(k);
    if (!this.clusterOrder.includes(cluster)) this.clusterOrder.push(cluster);
    if (outcome.ok) {
      outcome.set.seal();
      this.sets.set(k, outcome.set);
    } else this.sets.delete(k);
    const itemErrors = new Map(prev?.itemErrors ?? []);
    for (const [reason, n] of outcome.itemErrors) itemErrors.set(reason, (itemErrors.get(reason) ?? 0) + n);
    const droppedValues = new Map(prev?.droppedValues ?? []);
    for (const [reason, n] of outcome.set.dropped) droppedValues.set(reason, (droppedValues.get(reason) ?? 0) + n);
    this.dirty.add(outcome.collector);
    const capped = new Map(prev?.capped ?? []);
    for (const [what, n] of outcome.set.capped) capped.set(what, (capped.get(what) ?? 0) + n);
    const gaps = outcome.set.statsGaps;
    const futurePointsDropped = new Map(prev?.futurePointsDropped ?? []);
    for (const [node, n] of gaps?.futurePoints ?? []) {
      // Node names come from upstream: a bounded number of series, the rest under one label value.
      const k = futurePointsDropped.has(node) || futurePointsDropped.size < MAX_GAP_NODES ? node : 'other';
      futurePointsDropped.set(k, (futurePointsDropped.get(k) ?? 0) + n);
    }
    const perms = outcome.error && typeof outcome.error === 'object' && 'permissions' in outcome.error ? (outcome.error as { permissions: readonly string[] }).permissions : [];
    this.statuses.set(k, {
      cluster,
      collector: outcome.collector,
      ok: outcome.ok,
      lastError: outcome.ok ? undefined : describeError(outcome.error, { public: true }),
      lastDurationSeconds: outcome.durationSeconds,
      lastSuccessAt: outcome.ok ? outcome.finishedAt : prev?.lastSuccessAt,
      lastPollAt: outcome.finishedAt,
      lastPollMonoMs: monotonicMs(),
      ...(prev?.intervalSeconds === undefined ? {} : { intervalSeconds: prev.intervalSeconds }),
      ...(prev?.timeoutSeconds === undefined ? {} : { timeoutSeconds: prev.timeoutSeconds }),
      ...(prev?.schedule === undefined ? {} : { schedule: prev.schedule }),
      ...(prev?.nextSlotAt === undefined ? {} : { nextSlotAt: prev.nextSlotAt }),
      ...(prev?.nextSlotMonoMs === undefined ? {} : { nextSlotMonoMs: prev.nextSlotMonoMs }),
      series: outcome.ok ? outcome.set.size : 0,
      requests: outcome.requests.length,
      skipped: outcome.skipped,
      itemErrors,
      droppedValues,
      capped,
      statsNodesMissing: outcome.ok && gaps !== undefined ? gaps.missing.size : undefined,
      futurePointsDropped,
      notApplicable: outcome.notApplicable,
      note: outcome.note,
      missingPermissions: perms,
      reached: outcome.requests.some((r) => r.status !== undefined && r.status >= 200 && r.status < 300),
    });
    this.changed();
  }

  /** A scheduled collector's next slot, as the scheduler planned it: wall-clock epoch ms and monotonic ms. */
  recordSlot(cluster: string, collector: string, slot: { readonly atMs: number; readonly monoMs: number }): void {
    const k = key(cluster, collector);
    const prev = this.statuses.get(k);
    if (prev === undefined) return;
    this.statuses.set(k, { ...prev, nextSlotAt: slot.atMs, nextSlotMonoMs: slot.monoMs });
    this.changed();
  }

  /** The scheduler's backoff for a collector whose polls keep timing out (0: none). */
  recordBackoff(cluster: string, collector: string, seconds: number): void {
    const k = key(cluster, collector);
    if (this.backoffs.get(k) === seconds) return;
    this.backoffs.set(k, seconds);
    this.changed();
  }

  /** The outcome of a cluster's reachability probe: it alone decides `couchbase_up` once it has run. */
  recordProbe(cluster: string, reached: boolean): void {
    if (this.probes.get(cluster) === reached) return;
    this.probes.set(cluster, reached);
    this.changed();
  }

  /** Forget one (cluster, collector): a reload disabled it. */
  unregister(cluster: string, collector: string): void {
    const k = key(cluster, collector);
    if (this.sets.delete(k)) this.dirty.add(collector);
    this.statuses.delete(k);
    this.backoffs.delete(k);
    this.changed();
  }

  /** Forget everything of a cluster (it left the configuration). */
  dropCluster(cluster: string): void {
    for (const k of [...this.sets.keys()]) {
      if (!k.startsWith(`${cluster}\u0000`)) continue;
      this.sets.delete(k);
      this.dirty.add(k.slice(k.indexOf('\u0000') + 1));
    }
    for (const k of [...this.statuses.keys()]) if (k.startsWith(`${cluster}\u0000`)) this.statuses.delete(k);
    this.probes.delete(cluster);
    const i = this.clusterOrder.indexOf(cluster);
    if (i >= 0) this.clusterOrder.splice(i, 1);
    this.changed();
  }

  statusList(): CollectorStatus[] {
    return [...this.statuses.values()].map((st) => ({
      ...st,
      backoffSeconds: this.backoffs.get(key(st.cluster, st.collector)) ?? 0,
      probeReached: this.probes.get(st.cluster),
    }));
  }

  clusters(): readonly string[] {
    return this.clusterOrder;
  }

  /** True once every registered collector has finished its first poll, whatever its outcome. */
  allPolledOnce(): boolean {
    return [...this.statuses.values()].every((s) => s.ok !== undefined);
  }

  /** Names of the collectors whose series changed since the previous call (and forgets them). */
  takeDirty(): Set<string> {
    const d = this.dirty;
    this.dirty = new Set();
    return d;
  }

  /** One collector's samples from every cluster that has them, in cluster order (one exposition part). */
  collectorSets(collector: string): LabelledSet[] {
    const out: LabelledSet[] = [];
    for (const cluster of this.clusterOrder) {
      const set = this.sets.get(key(cluster, collector));
      if (set !== undefined) out.push({ base: { couchbase_cluster: cluster }, set });
    }
    return out;
  }

  /** Every cluster's samples plus the derived status families, ready for the renderer. */
  labelledSets(): LabelledSet[] {
    const out: LabelledSet[] = [];
    for (const [k, set] of this.sets) {
      const cluster = k.slice(0, k.indexOf('\u0000'));
      out.push({ base: { couchbase_cluster: cluster }, set });
    }
    out.push({ base: {}, set: statusSet(this.statusList()) });
    return out;
  }
}

/** Slack beyond a collector's schedule before a missing poll counts as overdue: a tick (1 s) and a second. */
export const OVERDUE_GRACE_MS = 2000;

/**
 * Mark the statuses whose next poll is overdue: one rule for every collector, "the next poll was due, and its
 * deadline plus OVERDUE_GRACE_MS has passed without a poll finishing".
 * - With an interval, the next poll is due one interval (plus the current backoff) after the last one finished,
 *   on the monotonic clock.
 * - With a schedule, it is due at the slot the scheduler planned after the last poll: a wall-clock instant, and
 *   the monotonic instant it was then expected at. The later of the two readings counts, so a slot is missed
 *   whichever clock moved: a wall clock stepped forward or a VM resumed from suspend (the monotonic clock stood
 *   still) shows the slot missed until the catch-up poll ends; a scheduler that stopped shows on both.
 * An overdue collector is a failure — success 0, the reason in lastError, no series counted — whatever its last
 * poll said: its values are as old as that poll, and whatever stopped its polls (a stalled thread, a scheduler
 * that does not tick) is not visible otherwise (issue 25, item 3). Applied where the statuses are served, on the
 * HTTP thread, so a collection thread that stopped altogether shows too.
 */
export function markOverdue(statuses: readonly CollectorStatus[], nowMono: number, nowWall: number = Date.now()): CollectorStatus[] {
  return statuses.map((st) => {
    if (st.schedule !== undefined) return markSlotMissed(st, nowMono, nowWall);
    if (st.lastPollMonoMs === undefined || st.intervalSeconds === undefined) return st;
    const allowance = (st.intervalSeconds + (st.backoffSeconds ?? 0) + (st.timeoutSeconds ?? st.intervalSeconds)) * 1000 + OVERDUE_GRACE_MS;
    const age = nowMono - st.lastPollMonoMs;
    if (age <= allowance) return st;
    return {
      ...st,
      ok: false,
      overdue: true,
      lastError: `poll overdue: none has finished for ${Math.floor(age / 1000)}s (interval ${st.intervalSeconds}s, deadline ${st.timeoutSeconds ?? st.intervalSeconds}s); the values of the last poll are withdrawn`,
      series: 0,
    };
  });
}

/** markOverdue for a scheduled collector: its planned slot passed, on either clock, by more than deadline and grace. */
function markSlotMissed(st: CollectorStatus, nowMono: number, nowWall: number): CollectorStatus {
  if (st.schedule === undefined || st.nextSlotAt === undefined) return st;
  const late = Math.max(nowWall - st.nextSlotAt, st.nextSlotMonoMs === undefined ? Number.NEGATIVE_INFINITY : nowMono - st.nextSlotMonoMs);
  const deadline = st.timeoutSeconds ?? 0;
  if (late <= deadline * 1000 + OVERDUE_GRACE_MS) return st;
  return {
    ...st,
    ok: false,
    overdue: true,
    lastError: `poll overdue: the slot at ${new Date(st.nextSlotAt).toISOString()} (schedule "${st.schedule.expression}"${st.schedule.timezone === undefined ? '' : ` in ${st.schedule.timezone}`}) passed ${Math.floor(late / 1000)}s ago and no poll has finished since (deadline ${deadline}s); the values of the last poll are withdrawn`,
    series: 0,
  };
}

/**
 * The status families (cbwatch_collector_*, couchbase_up) from a status list. Rendered where the statuses are
 * served (the HTTP thread), so a collection worker that died still shows as failed collectors.
 */
export function statusSet(statuses: readonly CollectorStatus[]): SampleSet {
  const s = new SampleSet();
  const up = new Map<string, boolean>();
  const probed = new Map<string, boolean>();
  for (const st of statuses) {
    if (st.probeReached !== undefined) probed.set(st.cluster, st.probeReached);
    const l = { couchbase_cluster: st.cluster, collector: st.collector };
    // Every configured collector from the first scrape on, whatever the number of clusters: what is already
    // true before its first poll (that it is pending, its schedule, no backoff); the rest waits for the poll.
    s.add(SELF.collectorFirstPollPending, l, st.lastPollAt === undefined);
    s.add(SELF.collectorBackoff, l, st.backoffSeconds ?? 0);
    if (st.intervalSeconds !== undefined) s.add(SELF.collectorInterval, l, st.intervalSeconds);
    if (st.nextSlotAt !== undefined) s.add(SELF.collectorNextSlot, l, st.nextSlotAt / 1000);
    if (st.intervalSeconds !== undefined || st.schedule !== undefined) s.add(SELF.collectorOverdue, l, st.overdue === true);
    if (st.ok === undefined) continue;
    s.add(SELF.collectorSuccess, l, st.ok);
    s.add(SELF.collectorDuration, l, st.lastDurationSeconds);
    if (st.lastSuccessAt !== undefined) s.add(SELF.collectorLastSuccess, l, st.lastSuccessAt / 1000);
    s.add(SELF.collectorSeries, l, st.series);
    s.add(SELF.collectorRequests, l, st.requests);
    s.add(SELF.collectorApplicable, l, st.notApplicable === undefined);
    for (const [reason, n] of st.skipped) s.add(SELF.collectorSkipped, { ...l, reason }, n);
    for (const [reason, n] of st.itemErrors) s.add(SELF.collectorItemErrors, { ...l, reason }, n);
    for (const [reason, n] of st.droppedValues) s.add(SELF.collectorDroppedValues, { ...l, reason }, n);
    // Every `what` from the first poll on (0 until something is capped), so increase() sees the first one.
    for (const what of CAP_WHATS) s.add(SELF.collectorCapped, { ...l, what }, st.capped?.get(what) ?? 0);
    s.add(SELF.statsNodesMissing, l, st.statsNodesMissing);
    for (const [node, n] of st.futurePointsDropped ?? []) s.add(SELF.statsFuturePoints, { ...l, node }, n);
    up.set(st.cluster, (up.get(st.cluster) ?? false) || st.reached);
  }
  // The probe, when it has run, is the truth for now; the collectors' last answers (up to an interval old,
  // minutes for the slow ones) only stand in before the first probe.
  for (const [cluster, reached] of probed) up.set(cluster, reached);
  for (const [cluster, reached] of up) s.add(SELF.up, { couchbase_cluster: cluster }, reached);
  return s;
}

/**
 * The polling loop. Every (cluster, collector) polls at its own interval: the first poll right at start
 * (with a little jitter so a large configuration does not hit Couchbase in one burst), never overlapping
 * itself, each bounded by its timeout. A ticker runs every second and starts the jobs that are due.
 *
 * Due times run on a monotonic clock (`monotonicMs`), never on the wall clock: an NTP step, a VM restored from
 * a snapshot or an operator's `date -s` moves the wall clock by seconds or hours, and due times kept in wall
 * time would stop every poll for as long as the clock went back (node-cron computes its slots from the wall
 * clock too). Timers (setTimeout, setInterval,
 * AbortSignal.timeout) are monotonic already. Wall-clock time is only data: sample timestamps, the last-success
 * timestamp, the `since` of a stats query (`deps.now`, the collectors' `ctx.now`).
 *
 * The one exception is a collector given a `schedule` (a cron expression): an operator who asks for the
 * backup collector at 03:00 means the wall clock's 03:00, in a time zone. node-cron (src/cron.ts) names the next
 * slot; the ticker, still the monotonic one, starts the poll when the wall clock reaches the slot, or when as much
 * time has passed on the monotonic clock as the wall clock said was left when the slot was planned, whichever is
 * first. So a wall clock stepped forward (or a VM resumed from suspend) starts a passed slot at once, and one
 * stepped back cannot hold polls up longer than the slot was away (the wall clock's slot then comes again, and
 * polls again: a repeated read, never a pause). node-cron's own timers are never started: they follow the wall
 * clock alone. A scheduled collector polls once at start too (readiness waits for every first poll).
 */
import { z } from 'zod';
import type { Log } from '../log-core.js';
import { runPoll } from '../collectors/context.js';
import { monotonicMs } from '../clock.js';
import { CronSpec } from '../cron.js';
import type { PollOutcome } from '../collectors/context.js';
import { createSharedCache } from '../collectors/shared.js';
import type { Collector, SharedCache } from '../collectors/types.js';
import type { CollectorName } from '../config/schema.js';
import { CLUSTER_SETTINGS } from '../config/settings.js';
import type { ClusterConfig, ResolvedCollectorOptions } from '../config/types.js';
import type { CouchbaseClient } from '../couchbase/client.js';
import type { SnapshotStore } from '../metrics/store.js';

export interface SchedulerDeps {
  readonly clusters: readonly ClusterConfig[];
  readonly clients: ReadonlyMap<string, CouchbaseClient>;
  readonly collectors: readonly Collector[];
  readonly store: SnapshotStore;
  readonly log: Log;
  /** Wall-clock time, epoch ms: data only (the collectors' ctx.now, poll finish times). Default Date.now. */
  readonly now?: () => number;
  /** Monotonic time, ms, for due times, backoff and cache ages (default monotonicMs). Tests step the two apart. */
  readonly clock?: () => number;
  /** Upper bound of the first-poll jitter, ms (default: 10% of the interval, at most 1 s). */
  readonly maxJitterMs?: number;
  /** How long a heavy collector's first poll holds back the next one of its cluster, at most, ms (default FIRST_POLL_STAGGER_MS). */
  readonly firstPollStaggerMs?: number;
}

/**
 * The collectors whose first poll is the widest (every bucket's stats, every replication's, every bucket's
 * scopes and collections): at start, a cluster runs them one at a time rather than all at once, so the answers
 * of three wide polls are not read, parsed and held in memory together. The others start
 * at once, as before.
 */
export const HEAVY_FIRST_POLLS: readonly string[] = ['bucket_stats', 'xdcr', 'collections'];

/**
 * The longest a heavy collector's first poll holds back the next heavy one of its cluster, ms. Readiness
 * (`/-/ready`) waits for every first poll, so staggering delays it by at most this per heavy collector after the
 * first (10 s with the three), and only when a cluster answers slowly: at the realistic scenario a first poll
 * ends well within it and the next one starts then. A hung cluster's polls run to their timeout (10 s or more)
 * and would otherwise make readiness wait for those one after the other.
 */
export const FIRST_POLL_STAGGER_MS = 5000;

interface Job {
  /** Replaced on a reload that kept the job (only the password can differ then). */
  cluster: ClusterConfig;
  readonly collector: Collector;
  readonly options: ResolvedCollectorOptions;
  readonly client: CouchbaseClient;
  readonly state: Map<string, unknown>;
  readonly shared: SharedCache;
  readonly log: Log;
  /** Monotonic ms (the scheduler's clock); never reached by a scheduled job, whose polls follow `slot`. */
  nextAt: number;
  /** The job's cron schedule (options.schedule), or undefined for an interval. */
  readonly cron: CronSpec | undefined;
  /** A scheduled job's next slot: wall-clock epoch ms and the monotonic ms expected then; undefined while it polls. */
  slot: { atMs: number; monoMs: number } | undefined;
  running: Promise<void> | undefined;
  lastErrorText: string | undefined;
  warnedPermissions: boolean;
  /** Polls in a row that hit their deadline. */
  timeouts: number;
  /** What the job was built from: a reload keeps the job (state, memos, last series) while this is unchanged. */
  readonly signature: string;
  /** Aborted when a reload removes or replaces the job. */
  readonly retired: AbortController;
}

/**
 * Everything of a cluster but its collectors and its password: what its client and probe are built from. A
 * rotated password alone keeps the client (and every job) and is handed to it (CouchbaseClient.setPassword).
 */
export function clusterSignature(c: ClusterConfig): string {
  const { collectors: _collectors, password: _password, passwordSource: _source, ...rest } = c;
  return JSON.stringify(rest);
}

export { monotonicMs } from '../clock.js';

/** What the store measures a collector's polls against: its interval, or its schedule; and its deadline. */
function timingOf(options: ResolvedCollectorOptions): { intervalMs: number; timeoutMs: number; schedule?: { expression: string; timezone: string | undefined } } {
  const base = { intervalMs: options.interval, timeoutMs: options.timeout };
  return options.schedule === undefined ? base : { ...base, schedule: { expression: options.schedule, timezone: options.timezone } };
}

/** Polls of a collector that keep timing out are at most this many intervals apart. */
export const MAX_BACKOFF_INTERVALS = 5;

/** Gap before the next poll after `timeouts` deadlines in a row: the interval, doubled per timeout, capped. */
export function backoffGap(interval: number, timeouts: number): number {
  if (timeouts <= 0) return interval;
  return Math.min(interval * 2 ** timeouts, interval * MAX_BACKOFF_INTERVALS);
}

/** Default period of the reachability probe behind `couchbase_up`. */
export const DEFAULT_PROBE_INTERVAL_MS = CLUSTER_SETTINGS.probe_interval.default;
/** A cheap authenticated call every role can make: its 2xx says the REST API answers with our credentials. */
export const PROBE_ROUTE = '/pools/default/nodeServices';
const probeSchema = z.unknown();

/** How often the ticker looks for due jobs: a poll starts at most this late. */
const TICK_MS = 1000;

export class Scheduler {
  private jobs: Job[] = [];
  private clusters: readonly ClusterConfig[];
  private readonly probes = new Map<string, { timer: NodeJS.Timeout; stop: AbortController }>();
  private started = false;
  private ticker: NodeJS.Timeout | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopping = new AbortController();
  private readonly now: () => number;
  private readonly clock: () => number;

  constructor(private deps: SchedulerDeps) {
    this.now = deps.now ?? Date.now;
    this.clock = deps.clock ?? monotonicMs;
    this.clusters = deps.clusters;
    for (const cluster of deps.clusters) {
      const client = deps.clients.get(cluster.name);
      if (!client) throw new Error(`no client for cluster ${cluster.name}`);
      // Cache ages are durations: on the monotonic clock.
      const shared = createSharedCache(this.clock);
      for (const collector of deps.collectors) {
        const options = cluster.collectors[collector.name as CollectorName] as ResolvedCollectorOptions;
        if (!options.enabled) continue;
        deps.store.register(cluster.name, collector.name, timingOf(options));
        this.jobs.push(this.makeJob(cluster, collector, options, client, shared));
      }
    }
  }

  private makeJob(cluster: ClusterConfig, collector: Collector, options: ResolvedCollectorOptions, client: CouchbaseClient, shared: SharedCache): Job {
    return {
      cluster,
      collector,
      options,
      client,
      state: new Map(),
      shared,
      log: this.deps.log.child({ couchbase_cluster: cluster.name, collector: collector.name }),
      nextAt: 0,
      cron: options.schedule === undefined ? undefined : new CronSpec(options.schedule, options.timezone),
      slot: undefined,
      running: undefined,
      lastErrorText: undefined,
      warnedPermissions: false,
      timeouts: 0,
      signature: JSON.stringify([clusterSignature(cluster), options]),
      retired: new AbortController(),
    };
  }

  /**
   * A scheduled job's next slot, from node-cron, on both clocks, told to the store (the overdue rule and
   * `cbwatch_collector_next_slot_timestamp_seconds`). node-cron reads the system clock (`new Date()`), so the
   * wall time here is Date.now(), not deps.now: tests step both with fake timers.
   */
  private planSlot(job: Job): void {
    if (job.cron === undefined || job.retired.signal.aborted) return;
    const wall = Date.now();
    const atMs = job.cron.nextSlot();
    job.slot = { atMs, monoMs: this.clock() + (atMs - wall) };
    this.deps.store.recordSlot(job.cluster.name, job.collector.name, job.slot);
  }

  /** Where a job polls next after its first poll: an interval after it, or its next cron slot. */
  private afterFirst(job: Job, t: number): void {
    if (job.cron === undefined) {
      job.nextAt = t + job.options.interval;
      return;
    }
    job.nextAt = Number.POSITIVE_INFINITY;
    this.planSlot(job);
  }

  /** First poll soon (jittered), then every interval or at every slot. */
  private schedule(job: Job, t0: number): void {
    const jitter = Math.floor(Math.random() * Math.min(this.deps.maxJitterMs ?? 1000, job.options.interval / 10));
    this.afterFirst(job, t0 + jitter);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.launch(job);
    }, jitter);
    this.timers.add(timer);
  }

  /**
   * First polls of a cluster's heavy collectors, one after the other: each starts when the previous one ended,
   * or FIRST_POLL_STAGGER_MS after it started, whichever comes first. The first starts at once; the others'
   * regular schedule counts from their own first poll.
   */
  private stagger(list: readonly Job[]): void {
    const bound = this.deps.firstPollStaggerMs ?? FIRST_POLL_STAGGER_MS;
    for (const job of list) job.nextAt = Number.POSITIVE_INFINITY;
    const next = (i: number): void => {
      const job = list[i];
      if (job === undefined || this.stopping.signal.aborted) return;
      this.afterFirst(job, this.clock());
      this.launch(job);
      let moved = false;
      const go = (): void => {
        if (moved) return;
        moved = true;
        clearTimeout(timer);
        this.timers.delete(timer);
        next(i + 1);
      };
      const timer = setTimeout(go, bound);
      this.timers.add(timer);
      if (job.running) void job.running.then(go);
      else go();
    };
    next(0);
  }

  /**
   * Apply a reloaded configuration. A (cluster, collector) whose options and cluster settings are unchanged
   * and whose client is the same keeps its job: its state, memos, schedule and last series. The others are
   * retired (their poll aborted and awaited, nothing recorded) and, if still configured, replaced by a new job
   * that polls soon; until it has, the old series stay served (the store entry is only overwritten). A
   * (cluster, collector) no longer configured loses its series and status.
   */
  async reconfigure(clusters: readonly ClusterConfig[], clients: ReadonlyMap<string, CouchbaseClient>): Promise<{ kept: number; added: number; removed: number }> {
    const old = new Map(this.jobs.map((j) => [`${j.cluster.name}\u0000${j.collector.name}`, j]));
    const next: Job[] = [];
    const fresh: Job[] = [];
    const sharedByCluster = new Map<string, SharedCache>();
    for (const cluster of clusters) {
      const client = clients.get(cluster.name);
      if (!client) throw new Error(`no client for cluster ${cluster.name}`);
      for (const collector of this.deps.collectors) {
        const options = cluster.collectors[collector.name as CollectorName] as ResolvedCollectorOptions;
        if (!options.enabled) continue;
        const k = `${cluster.name}\u0000${collector.name}`;
        const prev = old.get(k);
        const signature = JSON.stringify([clusterSignature(cluster), options]);
        if (prev && prev.signature === signature && prev.client === client) {
          old.delete(k);
          prev.cluster = cluster;
          sharedByCluster.set(cluster.name, prev.shared);
          next.push(prev);
          continue;
        }
        const shared = sharedByCluster.get(cluster.name) ?? (prev?.client === client ? prev.shared : createSharedCache(this.clock));
        sharedByCluster.set(cluster.name, shared);
        const job = this.makeJob(cluster, collector, options, client, shared);
        this.deps.store.register(cluster.name, collector.name, timingOf(options));
        next.push(job);
        fresh.push(job);
      }
    }
    const retired = [...old.values()];
    const replaced = new Set(next.map((j) => `${j.cluster.name}\u0000${j.collector.name}`));
    for (const j of this.jobs) {
      if (next.includes(j)) continue;
      j.retired.abort(new Error('configuration reloaded'));
      j.cron?.dispose();
    }
    const replacedOld = this.jobs.filter((j) => !next.includes(j));
    this.jobs = next;
    const oldClusters = this.clusters;
    this.clusters = clusters;
    await Promise.all(replacedOld.map((j) => j.running));
    for (const j of retired) {
      if (!replaced.has(`${j.cluster.name}\u0000${j.collector.name}`)) this.deps.store.unregister(j.cluster.name, j.collector.name);
    }
    const names = new Set(clusters.map((c) => c.name));
    for (const c of oldClusters) if (!names.has(c.name)) this.deps.store.dropCluster(c.name);
    if (this.started) {
      // A probe follows its cluster's client: restarted when that changed, stopped when the cluster left.
      for (const c of oldClusters) {
        const nc = clusters.find((x) => x.name === c.name);
        if (!nc || clients.get(c.name) !== this.deps.clients.get(c.name)) this.stopProbe(c.name);
      }
      for (const c of clusters) if (!this.probes.has(c.name)) this.startProbe(c, clients);
      const t0 = this.clock();
      for (const job of fresh) this.schedule(job, t0);
    }
    this.deps = { ...this.deps, clients, clusters };
    return { kept: next.length - fresh.length, added: fresh.length, removed: replacedOld.length };
  }

  get jobCount(): number {
    return this.jobs.length;
  }

  start(): void {
    this.started = true;
    const t0 = this.clock();
    const heavy = new Map<string, Job[]>();
    for (const job of this.jobs) {
      if (!HEAVY_FIRST_POLLS.includes(job.collector.name)) {
        this.schedule(job, t0);
        continue;
      }
      const list = heavy.get(job.cluster.name) ?? [];
      list.push(job);
      heavy.set(job.cluster.name, list);
    }
    for (const list of heavy.values()) this.stagger(list);
    for (const cluster of this.clusters) this.startProbe(cluster, this.deps.clients);
    this.ticker = setInterval(() => this.tick(), TICK_MS);
  }

  /**
   * `couchbase_up` comes from a probe of its own, not from the collectors: with 5-minute collectors, their last
   * answer could keep it at 1 for minutes after the cluster died. One small request per probe interval, never
   * overlapping itself, bounded by the interval and the request timeout.
   */
  private startProbe(cluster: ClusterConfig, clients: ReadonlyMap<string, CouchbaseClient>): void {
    const client = clients.get(cluster.name);
    if (!client) return;
    const every = cluster.probeInterval ?? DEFAULT_PROBE_INTERVAL_MS;
    const stop = new AbortController();
    let running = false;
    const probe = async (): Promise<void> => {
      if (running || this.stopping.signal.aborted || stop.signal.aborted) return;
      running = true;
      try {
        const deadline = AbortSignal.timeout(Math.min(every, cluster.requestTimeout));
        const signal = AbortSignal.any([deadline, this.stopping.signal, stop.signal]);
        let ok = false;
        try {
          await client.getJson(PROBE_ROUTE, {}, probeSchema, { signal });
          ok = true;
        } catch (err) {
          this.deps.log.debug({ couchbase_cluster: cluster.name, err }, 'reachability probe failed');
        }
        if (!this.stopping.signal.aborted && !stop.signal.aborted) this.deps.store.recordProbe(cluster.name, ok);
      } finally {
        running = false;
      }
    };
    void probe();
    const timer = setInterval(() => void probe(), every);
    timer.unref();
    this.probes.set(cluster.name, { timer, stop });
  }

  private stopProbe(cluster: string): void {
    const p = this.probes.get(cluster);
    if (!p) return;
    clearInterval(p.timer);
    p.stop.abort();
    this.probes.delete(cluster);
  }

  /** Start every job that is due and not already running. */
  private tick(): void {
    const now = this.clock();
    for (const job of this.jobs) {
      if (job.cron !== undefined) {
        this.tickSlot(job, now);
        continue;
      }
      if (job.nextAt > now + 50) continue;
      if (job.running) {
        // Still busy from the previous slot: skip this one rather than pile up.
        job.log.debug('previous poll still running; slot skipped');
        job.nextAt = now + job.options.interval;
        continue;
      }
      job.nextAt += job.options.interval;
      if (job.nextAt <= now) job.nextAt = now + job.options.interval;
      this.launch(job);
    }
  }

  /** A scheduled job: start its poll once the wall clock, or the monotonic one, has reached its slot. */
  private tickSlot(job: Job, now: number): void {
    const slot = job.slot;
    if (slot === undefined) return; // polling: planned again when the poll ends
    if (Date.now() < slot.atMs && now < slot.monoMs) return;
    if (job.running) {
      // Still busy from the start poll or an earlier slot: skip this one rather than pile up.
      job.log.debug('previous poll still running; slot skipped');
      this.planSlot(job);
      return;
    }
    job.slot = undefined;
    this.launch(job);
  }

  private launch(job: Job): void {
    if (job.running || this.stopping.signal.aborted || job.retired.signal.aborted) return;
    job.running = this.poll(job).finally(() => {
      job.running = undefined;
    });
  }

  private async poll(job: Job): Promise<void> {
    const startedAt = this.clock();
    const outcome = await runPoll({
      collector: job.collector,
      cluster: job.cluster,
      options: job.options as never,
      client: job.client,
      state: job.state,
      shared: job.shared,
      log: job.log,
      now: this.now,
      signal: AbortSignal.any([this.stopping.signal, job.retired.signal]),
    });
    if (this.stopping.signal.aborted && !outcome.ok) return; // shutting down: keep the last good snapshot
    if (job.retired.signal.aborted) return; // replaced by a reload: the new job records its own outcome
    // A poll that cannot finish (a hung endpoint) would otherwise hold requests open against the cluster
    // every interval: back off, doubling per timeout up to MAX_BACKOFF_INTERVALS; any finished poll resets.
    // Only the deadline counts. A poll that failed on a refused answer (too_large: past the byte or value cap;
    // over_budget; bad_body) did finish, and quickly: Couchbase answered, so polling it again costs one
    // request, and the collector must be back within one interval of the answers becoming normal again.
    // Oversized answers are refused within their first chunks (--couchbase.max-answer-values), no deadline is
    // hit and the collector is back at its next poll. A timeout still backs off, even when the wait was on this
    // side (slots, budget): a deadline cannot tell whose fault it was, and a hung Couchbase is the case to spare.
    if (job.cron !== undefined) {
      // No backoff for a schedule: its next poll is its next slot, at least a minute away.
      this.deps.store.record(job.cluster.name, outcome);
      this.planSlot(job);
      this.report(job, outcome);
      return;
    }
    const timedOut = !outcome.ok && (outcome.error as { code?: unknown } | undefined)?.code === 'CBW_ERR_TIMEOUT';
    job.timeouts = timedOut ? job.timeouts + 1 : 0;
    const gap = backoffGap(job.options.interval, job.timeouts);
    if (job.timeouts > 0) job.nextAt = Math.max(job.nextAt, startedAt + gap);
    this.deps.store.recordBackoff(job.cluster.name, job.collector.name, (gap - job.options.interval) / 1000);
    this.deps.store.record(job.cluster.name, outcome);
    this.report(job, outcome);
  }

  private report(job: Job, outcome: PollOutcome): void {
    const fields = { duration_seconds: Number(outcome.durationSeconds.toFixed(3)), series: outcome.set.size, requests: outcome.requests.length };
    if (outcome.ok) {
      if (job.lastErrorText !== undefined) job.log.info(fields, 'collector recovered');
      else job.log.debug(fields, 'poll finished');
      job.lastErrorText = undefined;
      if (outcome.set.duplicates > 0) job.log.warn({ duplicates: outcome.set.duplicates }, 'dropped duplicate series');
      return;
    }
    const err = outcome.error as { message?: string; code?: string; permissions?: string[] } | undefined;
    const text = err?.message ?? String(outcome.error);
    if (err?.code === 'CBW_ERR_FORBIDDEN' && !job.warnedPermissions) {
      job.warnedPermissions = true;
      job.log.warn({ permissions: err.permissions, role: job.collector.role }, `collector lacks a permission; grant the role "${job.collector.role}"`);
    }
    // Log a failure when it starts or changes; repeats of the same failure go to debug.
    if (text !== job.lastErrorText) job.log.warn({ err: outcome.error, ...fields }, 'poll failed');
    else job.log.debug({ err: outcome.error }, 'poll failed again');
    job.lastErrorText = text;
  }

  /** Some poll is running. */
  busy(): boolean {
    return this.jobs.some((j) => j.running !== undefined);
  }

  /** A scheduled collector's next slot (wall-clock epoch ms), for tests; undefined while it polls or for an interval. */
  nextSlotAt(cluster: string, collector: string): number | undefined {
    return this.jobs.find((j) => j.cluster.name === cluster && j.collector.name === collector)?.slot?.atMs;
  }

  /** When a collector polls next (the scheduler's monotonic clock, ms), for tests and the backoff. */
  nextPollAt(cluster: string, collector: string): number | undefined {
    return this.jobs.find((j) => j.cluster.name === cluster && j.collector.name === collector)?.nextAt;
  }

  /** Run every job once, now, and wait (used by tests and `cbwatch check`-like flows). */
  async pollAllOnce(): Promise<void> {
    for (const job of this.jobs) this.launch(job);
    await Promise.all(this.jobs.map((j) => j.running));
  }

  async stop(): Promise<void> {
    if (this.ticker !== undefined) clearInterval(this.ticker);
    this.ticker = undefined;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const name of [...this.probes.keys()]) this.stopProbe(name);
    this.stopping.abort(new Error('shutting down'));
    await Promise.all(this.jobs.map((j) => j.running));
    for (const j of this.jobs) j.cron?.dispose();
  }
}

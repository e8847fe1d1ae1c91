/**
 * The range source of the service statistics (7.0+): ONE shared `POST /pools/default/stats/range` a poll for every
 * enabled service collector (fetchServiceRange, through the cluster's single-flight cache), one query per spec with a
 * regex over its rows' native names (`operator: '=~'`), asked of that service's nodes, raw points on the 10 s step.
 * Each collector then values the shared answer against its own counter memo (serviceRangeValues): a level is the
 * newest point, a rate the exact increase since the previous poll's newest point per second, a mean of two the
 * ratio of two increases over the same points.
 *
 * The same protections as the bucket range source: series of a node that is not among the service's asked nodes are
 * dropped and their points counted (unknown_node); points refused by reason (range-values.ts); an answer's bounds
 * (range-limits.ts) counted as caps; an `errors` entry naming a node is that node's item failure (its values are
 * missing, the others' stay), one naming none the spec's; 403 is a missing permission, 404/405 the range API
 * missing (RangeUnavailableError: `auto` falls back to the envelopes, source.ts).
 */
import { z } from 'zod';
import { boundedText, CbwError } from '../errors.js';
import { MAX_GAP_NODES } from '../metrics/family.js';
import type { StatsGaps } from '../metrics/family.js';
import type { StatsContext } from './context.js';
import { MAX_400_TEXT, rangeStateOf, RangeForbiddenError, RangeUnavailableError, serverTimeoutMs, STATS_RANGE_ROUTE } from './range-fetch.js';
import { RangeCaps } from './range-limits.js';
import { missingCode, reportRangeErrors } from './range-nodes.js';
import { MAX_FUTURE_SKEW_MS, MAX_QUERIES_PER_REQUEST, RANGE_STEP_SECONDS, rangeWindow } from './range-plan.js';
import type { RangeQuery } from './range-plan.js';
import { answerHead, treeEntries } from './range-tree.js';
import { dropAfter, dropNegative, HAS_INC, rawRun, REFUSED, RUN_VALUE, seriesKey, takeRefused, V_INC, V_SECS, V_T, V_V, valueRun } from './range-values.js';
import type { MemoPoint } from './counter-memo.js';
import { declaredServiceSpecs, everyNode, itemKey, kindOfServiceRow, nativeMetrics } from './service-table.js';
import type { ServiceSpec, ServiceStatRow } from './service-table.js';
import { ITEM_WIDE, itemOf as itemValuesOf, setOf } from './values.js';
import type { ItemValues, SourceValues, ValueKind } from './values.js';

/** A service spec's previous newest point per native series (few series: a Map of points). */
type PointMemo = Map<string, MemoPoint>;

/** What the service sources need besides a statistics context: which collectors are enabled, and their intervals. */
export interface ServiceContext extends StatsContext {
  readonly cluster: StatsContext['cluster'] & { readonly collectors?: Readonly<Record<string, { readonly enabled: boolean; readonly interval: number }>> };
}

/** The shared cache key of the poll's service range answer. */
export const SERVICE_RANGE_KEY = 'serviceRange';

/**
 * How long one shared answer serves the service collectors: those polled at the same tick share it; a later poll
 * (another interval) asks again. Below the 10 s step, so no poll reads a newest point older than one step.
 */
export const SERVICE_RANGE_MAX_AGE_MS = 5_000;

/** One spec's part of the shared answer. */
export type ServiceAnswer = { readonly raw: unknown } | { readonly failed: unknown };

/** The shared answer of one poll's service range request(s). */
export interface ServiceRangeAnswer {
  /** Spec id → its query's raw answer (as JSON.parse made it), or the failure of its request. */
  readonly answers: ReadonlyMap<string, ServiceAnswer>;
  /** Spec id → the nodes its query asked (the service's active nodes). */
  readonly asked: ReadonlyMap<string, readonly string[]>;
  /** Requests made. */
  readonly requests: number;
}

/** The nodes of each service, from /pools/default (given by service-values.ts). */
export type ServiceNodes = (ctx: StatsContext, service: string) => Promise<readonly string[]>;

/** The names as one regex, `(a|b|c)`, without `^…$`: the range API's `=~` is a Prometheus matcher, anchored on both ends. */
export function nameRegex(names: readonly string[]): string {
  const escaped = [...new Set(names)].sort().map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return escaped.length === 1 ? (escaped[0] as string) : `(${escaped.join('|')})`;
}

/** A spec's native metrics. */
export function specMetrics(spec: ServiceSpec): string[] {
  return [...new Set(spec.rows.flatMap(nativeMetrics))];
}

/** One spec's query: its rows' native names as one regex, its service's nodes (when given), the window on the step. Pure. */
export function serviceQuery(spec: ServiceSpec, nodes: readonly string[] | undefined, from: number, end: number, timeoutMs?: number): RangeQuery {
  return {
    metric: [{ label: 'name', value: nameRegex(specMetrics(spec)), operator: '=~' }],
    start: from,
    end,
    step: RANGE_STEP_SECONDS,
    ...(nodes !== undefined ? { nodes: [...nodes] } : {}),
    ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
  };
}

const answersSchema = z.array(z.unknown());

/**
 * The specs a shared request asks: `own` (the caller's) and every other declared spec whose collector is enabled
 * (all of them when the context does not say) and whose service runs on some node. Each with its nodes.
 */
async function specsToAsk(ctx: ServiceContext, own: ServiceSpec, nodesOf: ServiceNodes): Promise<Array<{ spec: ServiceSpec; nodes: readonly string[] }>> {
  const out: Array<{ spec: ServiceSpec; nodes: readonly string[] }> = [];
  const specs = [own, ...declaredServiceSpecs().filter((s) => s.id !== own.id)];
  for (const spec of specs) {
    if (spec !== own && ctx.cluster.collectors?.[spec.collector]?.enabled === false) continue;
    if (specMetrics(spec).length === 0) continue;
    const nodes = await nodesOf(ctx, spec.service);
    if (nodes.length > 0 || spec === own) out.push({ spec, nodes });
  }
  return out;
}

/**
 * The poll's shared service answer: made by the first service collector of the poll, reused by the others within
 * SERVICE_RANGE_MAX_AGE_MS. An answer that lacks the caller's spec (made before the spec was declared, or while its
 * collector was off) is completed by a request of its own. Throws RangeUnavailableError (404/405),
 * RangeForbiddenError (403), or the first failure when every request failed.
 */
export async function fetchServiceRange(ctx: ServiceContext, spec: ServiceSpec, nodesOf: ServiceNodes): Promise<ServiceRangeAnswer> {
  const shared = await ctx.shared.get(SERVICE_RANGE_KEY, SERVICE_RANGE_MAX_AGE_MS, async () => loadServiceRange(ctx, await specsToAsk(ctx, spec, nodesOf)));
  if (shared.answers.has(spec.id)) return shared;
  return ctx.shared.get(`${SERVICE_RANGE_KEY}:${spec.id}`, SERVICE_RANGE_MAX_AGE_MS, async () => loadServiceRange(ctx, [{ spec, nodes: await nodesOf(ctx, spec.service) }]));
}

/** The window of a shared answer: the longest interval of the asked specs' collectors and the slack (rangeWindow's first-poll window). */
function windowOf(ctx: ServiceContext, asked: ReadonlyArray<{ spec: ServiceSpec }>): { from: number; end: number } {
  let interval = ctx.options.interval;
  for (const { spec } of asked) interval = Math.max(interval, ctx.cluster.collectors?.[spec.collector]?.interval ?? 0);
  return rangeWindow(ctx.now(), undefined, interval);
}

async function loadServiceRange(ctx: ServiceContext, asked: ReadonlyArray<{ spec: ServiceSpec; nodes: readonly string[] }>): Promise<ServiceRangeAnswer> {
  const { from, end } = windowOf(ctx, asked);
  const answers = new Map<string, ServiceAnswer>();
  const nodes = new Map(asked.map((a) => [a.spec.id, a.nodes] as const));
  // A service that runs nowhere is not asked (its collector is not applicable).
  const queried = asked.filter((a) => a.nodes.length > 0);
  let failed = 0;
  let first: unknown;
  let requests = 0;
  for (let i = 0; i < queried.length; i += MAX_QUERIES_PER_REQUEST) {
    const batch = queried.slice(i, i + MAX_QUERIES_PER_REQUEST);
    const remaining = ctx.deadline === undefined ? ctx.options.timeout : ctx.deadline - performance.now();
    const timeout = serverTimeoutMs(remaining, ctx.cluster.requestTimeout);
    requests++;
    try {
      const ask = (withNodes: boolean) =>
        ctx.client.requestJson(STATS_RANGE_ROUTE, {}, answersSchema, {
          method: 'POST',
          json: batch.map((a) => serviceQuery(a.spec, withNodes ? a.nodes : undefined, from, end, timeout)),
          allowStatus: [400, 403, 404, 405],
        });
      let res = await ask(true);
      // The node list refused (a node renamed or removed since it was read): once without it; the answers' nodes
      // are still checked against the service's nodes (serviceRangeValues).
      if (res.status === 400 && /node|hostname/i.test(res.text)) {
        ctx.log.warn({ status: 400, body: boundedText(res.text, MAX_400_TEXT) }, 'statistics: the range API refused the service nodes; asking without them');
        requests++;
        res = await ask(false);
      }
      if (res.status === 403) throw new RangeForbiddenError();
      if (res.status === 404 || res.status === 405) throw new RangeUnavailableError(res.status);
      if (res.status === 400) {
        const why = boundedText(res.text, MAX_400_TEXT);
        const err = new CbwError('CBW_ERR_HTTP', `POST ${STATS_RANGE_ROUTE} (service statistics) answered 400: ${why}`);
        err.brief = `POST ${STATS_RANGE_ROUTE} answered 400`;
        (err as CbwError & { status: number }).status = 400;
        throw err;
      }
      const data = res.data ?? [];
      batch.forEach((a, k) => answers.set(a.spec.id, { raw: data[k] }));
    } catch (err) {
      if (err instanceof RangeUnavailableError || err instanceof RangeForbiddenError || ctx.signal.aborted) throw err;
      failed++;
      first ??= err;
      for (const a of batch) answers.set(a.spec.id, { failed: err });
    }
  }
  // Every request failed: the poll's failure (one that failed among others costs its specs only).
  if (failed > 0 && failed === Math.ceil(queried.length / MAX_QUERIES_PER_REQUEST)) throw first;
  // Specs whose service runs nowhere: an empty answer.
  for (const a of asked) if (!answers.has(a.spec.id)) answers.set(a.spec.id, { raw: { data: [], errors: [] } });
  return { answers, asked: nodes, requests };
}

/** The parts a row reads in one cell (an item on a node, or the item over the nodes): sums over its series. */
interface Part {
  level: number;
  inc: number;
  rate: number;
  /** Some series had no increase this poll (its first point, or none newer than the previous poll's). */
  noInc: boolean;
}

/** Per item, per node (or ITEM_WIDE), per native metric (with its matchers' row): the parts. */
type Cells = Map<string, Map<string, Map<string, Part>>>;

function partOf(cells: Cells, item: string, node: string, metric: string): Part {
  let byNode = cells.get(item);
  if (byNode === undefined) cells.set(item, (byNode = new Map()));
  let byMetric = byNode.get(node);
  if (byMetric === undefined) byNode.set(node, (byMetric = new Map()));
  let p = byMetric.get(metric);
  if (p === undefined) byMetric.set(metric, (p = { level: 0, inc: 0, rate: 0, noInc: false }));
  return p;
}

/** A row part's key among a cell's parts: the metric, and the row's matchers when it has some. */
function partKey(metric: string, row: ServiceStatRow): string {
  return row.matchers === undefined ? metric : `${metric}{${Object.entries(row.matchers).map(([k, v]) => `${k}=${v}`).join(',')}}`;
}

function matches(labels: Readonly<Record<string, string>>, m: Readonly<Record<string, string>> | undefined): boolean {
  if (m === undefined) return true;
  for (const k in m) if (labels[k] !== m[k]) return false;
  return true;
}

/** A row's value from a cell's parts, in the family's unit; undefined: named but no value; absent (no entry): no series. Pure. */
export function rowValue(row: ServiceStatRow, parts: ReadonlyMap<string, Part>): { value: number | undefined } | undefined {
  const scale = row.nativeScale ?? row.scale ?? 1;
  if (row.native === undefined) return undefined;
  const num = parts.get(partKey(row.native, row));
  if (row.kind === 'mean_of_two') {
    const denName = row.per?.native;
    const den = denName === undefined ? undefined : parts.get(partKey(denName, row));
    if (num === undefined && den === undefined) return undefined;
    if (num === undefined || den === undefined || num.noInc || den.noInc || den.inc <= 0) return { value: undefined };
    return { value: (num.inc / den.inc) * scale };
  }
  if (num === undefined) return undefined;
  if (row.kind === 'rate') return { value: num.noInc ? undefined : num.rate * scale };
  return { value: num.level * scale };
}

/** valueRun's previous point, reused: read before the next series is valued. */
const PREVIOUS = { t: 0, v: 0 };

/** The memo of one spec's series in a collector's state. */
function stateKey(spec: ServiceSpec): string {
  return `\u0000range:${spec.id}`;
}

/** Per poll (its sample set), the nodes already reported missing by one of the collector's tables. */
const toldNodes = new WeakMap<object, Set<string>>();

/**
 * One spec's neutral values from the shared answer, against the collector's own memo (ctx.state): items keyed by
 * the item (node-level: the node), sets per node (perNode) or ITEM_WIDE (summed over the nodes), values in the
 * family's unit under each row's `stat`. Reports what it could not read (see the header); throws when the spec's
 * request failed, or its answer failed on every node.
 */
export function serviceRangeValues(ctx: StatsContext, spec: ServiceSpec, shared: ServiceRangeAnswer): SourceValues {
  const st = rangeStateOf(ctx.state, stateKey(spec));
  const answer = shared.answers.get(spec.id);
  if (answer === undefined) throw new CbwError('CBW_ERR_SCHEMA', `range API: no answer for the ${spec.id} statistics`);
  if ('failed' in answer) throw answer.failed;
  const asked = shared.asked.get(spec.id) ?? [];
  const members = new Set(asked);
  const caps = new RangeCaps();
  takeRefused();
  const head = answerHead(answer.raw, caps);
  const entries = treeEntries(head, false, caps);
  const byMetric = new Map<string, ServiceStatRow[]>();
  for (const row of spec.rows) for (const m of nativeMetrics(row)) (byMetric.get(m) ?? byMetric.set(m, []).get(m) as ServiceStatRow[]).push(row);
  const now = ctx.now();
  const maxT = now + MAX_FUTURE_SKEW_MS;
  const cells: Cells = new Map();
  const newest = new Map<string, number>();
  const future = new Map<string, number>();
  const seen: PointMemo = new Map();
  const nodesSeen = new Set<string>();
  for (const e of entries) {
    const name = e.labels.name;
    const rows = name === undefined ? undefined : byMetric.get(name);
    const run = rawRun(e.values);
    if (name === undefined || rows === undefined) {
      ctx.skipped('unasked_series', `${spec.id}: ${name ?? '(no name)'}`);
      continue;
    }
    if (members.size > 0 && !members.has(e.node)) {
      REFUSED.unknown_node += run.n;
      continue;
    }
    const parts = spec.itemLabels.map((l) => e.labels[l]);
    if (parts.some((p) => p === undefined)) {
      ctx.skipped('no_item_label', `${spec.id}: ${name} on ${e.node}`);
      continue;
    }
    const item = spec.itemLabels.length === 0 ? e.node : (spec.itemOf ?? itemKey)(parts as string[]);
    let to = dropAfter(run, 0, run.n, maxT);
    if (to < run.n && (future.has(e.node) || future.size < MAX_GAP_NODES)) future.set(e.node, (future.get(e.node) ?? 0) + run.n - to);
    if (!rows.every((r) => r.signed === true)) to = dropNegative(run, 0, to);
    const key = seriesKey({ metric: name, node: e.node, labels: e.labels });
    const flags = valueRun(run, 0, to, st.memo.pointInto(st.memo.slotOf(key), PREVIOUS));
    if (flags === 0) continue;
    const t = RUN_VALUE[V_T] as number;
    const v = RUN_VALUE[V_V] as number;
    seen.set(key, { t, v });
    nodesSeen.add(e.node);
    if (t > (newest.get(item) ?? 0)) newest.set(item, Math.min(t, now));
    const targets = new Set<string>();
    for (const row of rows) if (matches(e.labels, row.matchers)) targets.add(partKey(name, row));
    for (const pk of targets) {
      for (const node of spec.perNode ? [e.node] : [ITEM_WIDE]) {
        const p = partOf(cells, item, node, pk);
        p.level += v;
        if ((flags & HAS_INC) !== 0) {
          p.inc += RUN_VALUE[V_INC] as number;
          p.rate += (RUN_VALUE[V_INC] as number) / (RUN_VALUE[V_SECS] as number);
        } else p.noInc = true;
      }
    }
  }
  // The memo keeps this answer's newest points only: a series gone takes its record with it.
  st.memo.clear();
  for (const [k, r] of seen) st.memo.add(k, r.t, r.v, 0);
  st.lastPoll = now;
  caps.takePoints();
  for (const [what, n] of caps.counts) ctx.out.countCap(what, n);
  for (const [why, n] of caps.points) ctx.out.countDropped?.(why, n);
  // The answer's errors: a node's, one item failure per node; the rest per cause.
  const missing = new Map<string, string>();
  for (const [node, why] of head.byNode) if (!missing.has(node) && missing.size < MAX_GAP_NODES) missing.set(node, why);
  // A node that should have series of its own (everyNode) and has none while another node has some: gone silent.
  if (everyNode(spec) && nodesSeen.size > 0) for (const n of asked) if (!nodesSeen.has(n) && !missing.has(n) && missing.size < MAX_GAP_NODES) missing.set(n, 'no statistics in the answer');
  // One item failure per node and poll, however many of the collector's tables lacked it.
  let told = toldNodes.get(ctx.out);
  if (told === undefined) toldNodes.set(ctx.out, (told = new Set()));
  for (const [n, why] of missing) {
    if (told.has(n)) continue;
    told.add(n);
    const err = new CbwError(missingCode(why), `range API: the ${spec.id} statistics of node ${n} are missing from the answer (${why})`);
    err.brief = `range API: the ${spec.id} statistics of a node are missing`;
    ctx.itemFailed(`range node ${n}`, err);
  }
  reportRangeErrors(ctx, head.clusterErrors.length > 0 ? [{ metric: spec.id, errors: head.clusterErrors }] : []);
  const gaps: StatsGaps = { collector: spec.collector, missing, futurePoints: future };
  ctx.out.statsGaps = gaps;
  st.gaps = gaps;
  // The poll's note (statsValues) reads the collector's default range state.
  rangeStateOf(ctx.state).gaps = gaps;
  if (head.erroredNodes.has('*') && nodesSeen.size === 0) {
    throw new CbwError('CBW_ERR_HTTP', `range API: the ${spec.id} statistics failed on every node${head.clusterErrors[0] === undefined ? '' : `: ${head.clusterErrors[0]}`}`);
  }
  const items = new Map<string, ItemValues>();
  for (const [item, byNode] of cells) {
    const iv = itemValuesOf(items, item);
    iv.newest = newest.get(item);
    for (const [node, parts] of byNode) {
      const set = setOf(iv, node);
      for (const row of spec.rows) {
        const got = rowValue(row, parts);
        if (got !== undefined) set.set(row.stat, got.value);
      }
    }
  }
  return { items, kindOf: kindsOf(spec), gaps };
}

/** A spec's kindOf. */
export function kindsOf(spec: ServiceSpec): (stat: string) => ValueKind {
  const kinds = new Map(spec.rows.map((r) => [r.stat, kindOfServiceRow(r)] as const));
  return (stat) => kinds.get(stat) ?? 'level';
}

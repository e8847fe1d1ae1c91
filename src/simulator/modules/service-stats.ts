/**
 * The legacy service statistics sections of every profile (6.6.5 to 8.0; 7.x answers them from its native series,
 * here from the same model, ../services.ts):
 *   GET /pools/default/buckets/@<section>/stats
 *   GET /pools/default/buckets/@<section>/nodes/<host:port>/stats
 * (ns_server@7.6.2:src/menelaus_web.erl, handlers menelaus_stats:handle_stats_section/3 and
 * handle_stats_section_for_node/4; the same routes in 6.6.5). Sections (menelaus_stats.erl services_sections/1):
 * `@query`, `@index`, `@fts`, `@eventing`, `@cbas`, and per bucket `@index-<bucket>`, `@fts-<bucket>`,
 * `@cbas-<bucket>`, `@eventing-<bucket>` (the last two carry no statistic here: the simulator models no analytics
 * link, and functions are no longer tied to a bucket from 7.0, stat_names_mappings.erl 7.6.2:324-328). A bucket
 * section of a bucket that does not exist answers 404 (menelaus_stats.erl check_bucket). Any other `@…` id,
 * `@system-processes` included, is taken for a bucket name and answers 404 (section_bucket/1 falls through):
 * per-process statistics exist only natively, from 7.0.
 *
 * The answer is the bucket stats' envelope (`{op: {samples: {timestamp, <key>: […]}, samplesCount, isPersistent:
 * false, lastTStamp, interval}}`, the per-node one with `hostname`), sampled as ../sampling.ts says (`zoom`,
 * `haveTStamp`, the skew and stall knobs): counters as their per-second rate, gauges as levels, eventing's figures
 * as the running totals they are. The nodes of a section are the active nodes running its service
 * (section_nodes/1 → ns_cluster_membership:service_actual_nodes); the cluster-wide answer SUMS the nodes that are up
 * (merge_all_samples_normally), node-level percentages included (index_ram_percent: use the per-node route). The
 * per-node route answers 404 for an unknown node or one that does not run the service; a node that is down answers
 * timestamps and no statistic.
 *
 * Keys besides the model's (../services.ts): bucket totals `index/<stat>` and `fts/<stat>` (the sum over the
 * bucket's indexes, service_stats_collector.erl aggregate_item_stat), `eventing/<stat>` (the sum over the
 * functions); then, from the merged values, the computed stats of menelaus_stats.erl computed_stats_lazy_proplist/1
 * (ns_server@7.6.2; a zero divisor gives 0, Erlang's badarith):
 * - `@query`: query_avg_req_time = request_time × 1e-9 / requests (s), query_avg_svc_time likewise,
 *   query_avg_response_size = result_size / requests, query_avg_result_count = result_count / requests;
 * - `@index-<b>`, per index: avg_item_size = raw_data_size / items_count, avg_scan_latency = total_scan_duration /
 *   num_rows_returned (ns per row), num_docs_pending+queued, cache_miss_ratio = misses × 100 / (hits + misses),
 *   index_frag_percent = (log_space_on_disk − data_size_on_disk) × 100 / log_space_on_disk (0 when the log is 0 or
 *   smaller than the data), index_resident_percent = recs_in_mem × 100 / (recs_in_mem + recs_on_disk); bucket
 *   `index/fragmentation` = 100 × overhead / max(overhead, disk_size) of the bucket totals;
 * - `@fts-<b>`, per index: avg_queries_latency = total_request_time × 1e-6 / total_queries (ms);
 * - `@eventing` (stat_names_mappings.erl 7.6.2:965-979), per function and in total: processed_count = on_update_success
 *   + on_delete_success (+ timer_callback_success from 7.0); failed_count = bucket_op_exception_count +
 *   checkpoint_failure_count + n1ql_op_exception_count + timeout_count + on_update_failure + on_delete_failure
 *   (+ doc_timer_create_failure + non_doc_timer_create_failure before 7.0, + timer_callback_failure from 7.0).
 *
 * Knobs: `analyticsNodes` (number; default 0, the `demo` scenario 1): that many nodes from the first also run the
 * analytics service (`cbas`), at start (nodeServices then advertises its ports, /pools/default its service). The
 * model's knobs (serviceStatValues, slowQueryBurst, extraSearchIndexes) are in ../services.ts, the index and
 * function lists' in ./index-status.ts and ./eventing.ts.
 */
import type { FastifyReply } from 'fastify';
import { sampleTimes } from '../sampling.js';
import type { SampleQuery } from '../sampling.js';
import { SECTION_SERVICES, nodeServiceStats } from '../services.js';
import type { SimContext, SimModule, SimNode } from '../types.js';
import { effectiveNodes, gatherDelay, nodeFault } from './cluster.js';

/** The service of a section id (`@index-travel-sample` → index) and its bucket, or undefined for no section. */
export function parseSection(ctx: SimContext, id: string): { service: string; bucket?: string } | undefined {
  const plain = SECTION_SERVICES[id];
  if (plain !== undefined) return { service: plain };
  const m = /^@(index|fts|cbas|eventing)-(.+)$/.exec(id);
  if (!m) return undefined;
  const service = SECTION_SERVICES[`@${m[1] as string}`] as string;
  return { service, bucket: m[2] as string };
}

/** The active nodes running the service now (the section's nodes), the knob's failed-over ones excluded. */
function sectionNodes(ctx: SimContext, service: string): SimNode[] {
  return effectiveNodes(ctx).filter((n) => n.membership === 'active' && n.services.includes(service) && nodeFault(ctx, n.hostname).failedOver !== true);
}

function div(a: number, b: number): number {
  return b === 0 ? 0 : a / b;
}

/** A stat computed after the merge from others (its parts' values in order). */
interface ComputedDef {
  readonly name: string;
  readonly parts: readonly string[];
  readonly f: (v: readonly number[]) => number;
}

/**
 * The computed stats of a section whose merged keys are `keys` (menelaus_stats.erl computed_stats_lazy_proplist/1,
 * 7.6.2): only those whose parts are all there (combine_samples leaves the others out).
 */
function computedDefs(section: string, keys: ReadonlySet<string>, seven: boolean): ComputedDef[] {
  const out: ComputedDef[] = [];
  const z2 = (name: string, a: string, b: string, f: (x: number, y: number) => number): void => {
    if (keys.has(a) && keys.has(b)) out.push({ name, parts: [a, b], f: (v) => f(v[0] as number, v[1] as number) });
  };
  if (section === '@query') {
    z2('query_avg_req_time', 'query_request_time', 'query_requests', (t, n) => div(t * 1e-9, n));
    z2('query_avg_svc_time', 'query_service_time', 'query_requests', (t, n) => div(t * 1e-9, n));
    z2('query_avg_response_size', 'query_result_size', 'query_requests', div);
    z2('query_avg_result_count', 'query_result_count', 'query_requests', div);
  } else if (section.startsWith('@index-')) {
    z2('index/fragmentation', 'index/disk_overhead_estimate', 'index/disk_size', (o, d) => div(100 * o, Math.max(o, d)));
    for (const ix of items(keys, 'index/')) {
      const p = `index/${ix}/`;
      z2(`${p}avg_item_size`, `${p}raw_data_size`, `${p}items_count`, div);
      z2(`${p}avg_scan_latency`, `${p}total_scan_duration`, `${p}num_rows_returned`, div);
      z2(`${p}num_docs_pending+queued`, `${p}num_docs_pending`, `${p}num_docs_queued`, (a, b) => a + b);
      z2(`${p}cache_miss_ratio`, `${p}cache_hits`, `${p}cache_misses`, (h, m) => div(m * 100, h + m));
      z2(`${p}index_frag_percent`, `${p}data_size_on_disk`, `${p}log_space_on_disk`, (d, l) => (l === 0 || l < d ? 0 : ((l - d) * 100) / l));
      z2(`${p}index_resident_percent`, `${p}recs_in_mem`, `${p}recs_on_disk`, (m, d) => div(m * 100, m + d));
    }
  } else if (section.startsWith('@fts-')) {
    for (const ix of items(keys, 'fts/')) z2(`fts/${ix}/avg_queries_latency`, `fts/${ix}/total_request_time`, `fts/${ix}/total_queries`, (t, n) => div(t * 1e-6, n));
  } else if (section === '@eventing') {
    const processed = ['on_update_success', 'on_delete_success', ...(seven ? ['timer_callback_success'] : [])];
    const failed = [
      'bucket_op_exception_count',
      'checkpoint_failure_count',
      'n1ql_op_exception_count',
      'timeout_count',
      'on_update_failure',
      'on_delete_failure',
      ...(seven ? ['timer_callback_failure'] : ['doc_timer_create_failure', 'non_doc_timer_create_failure']),
    ];
    for (const prefix of [...items(keys, 'eventing/').map((f) => `eventing/${f}/`), 'eventing/']) {
      for (const [name, parts] of [
        ['processed_count', processed],
        ['failed_count', failed],
      ] as const) {
        const full = parts.map((x) => `${prefix}${x}`);
        if (full.every((k) => keys.has(k))) out.push({ name: `${prefix}${name}`, parts: full, f: (v) => v.reduce((a, x) => a + x, 0) });
      }
    }
  }
  return out;
}

/** The item names (`index/<item>/<stat>`) among the keys. */
function items(keys: Iterable<string>, prefix: string): string[] {
  const out = new Set<string>();
  for (const k of keys) {
    if (!k.startsWith(prefix)) continue;
    const rest = k.slice(prefix.length);
    const i = rest.lastIndexOf('/');
    if (i > 0) out.add(rest.slice(0, i));
  }
  return [...out];
}

/** The section's envelope over `nodes` (their values summed), as menelaus_stats builds it. */
export function sectionEnvelope(ctx: SimContext, section: string, q: SampleQuery, nodes: readonly SimNode[]): Record<string, unknown> {
  const { zoom, stamps, skew, have } = sampleTimes(ctx, q);
  const n = stamps.length;
  // Every key once, with the generators of the nodes that have it; then the bucket or function totals.
  const gens = new Map<string, Array<(t: number) => number>>();
  for (const node of nodes) for (const s of nodeServiceStats(ctx, node)) if (s.section === section) (gens.get(s.key) ?? gens.set(s.key, []).get(s.key))?.push(s.gen);
  const values = new Map<string, number[]>();
  for (const [key, gs] of gens) {
    const arr = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const t = (stamps[i] as number) - skew;
      let v = 0;
      for (const g of gs) v += g(t);
      arr[i] = v;
    }
    values.set(key, arr);
  }
  const totals = section.startsWith('@index-') ? 'index/' : section.startsWith('@fts-') ? 'fts/' : section === '@eventing' ? 'eventing/' : undefined;
  if (totals !== undefined) {
    for (const [key, arr] of [...values]) {
      const rest = key.slice(totals.length);
      const i = rest.lastIndexOf('/');
      if (i <= 0) continue;
      const total = `${totals}${rest.slice(i + 1)}`;
      const acc = values.get(total) ?? values.set(total, new Array<number>(n).fill(0)).get(total) as number[];
      for (let j = 0; j < n; j++) acc[j] = (acc[j] as number) + (arr[j] as number);
    }
  }
  const samples: Record<string, number[]> = {};
  // menelaus_stats.erl samples_to_proplists: the computed stats first, then the gathered ones in name order.
  for (const def of computedDefs(section, new Set(values.keys()), ctx.options.profile.rangeApi)) {
    const parts = def.parts.map((p) => values.get(p) as number[]);
    const arr = new Array<number>(n);
    for (let i = 0; i < n; i++) arr[i] = def.f(parts.map((p) => p[i] as number));
    samples[def.name] = arr;
  }
  for (const k of [...values.keys()].sort()) samples[k] = values.get(k) as number[];
  samples.timestamp = stamps;
  const op: Record<string, unknown> = {
    samples,
    samplesCount: zoom.count,
    isPersistent: false,
    lastTStamp: n > 0 ? stamps[n - 1] : 0,
    interval: zoom.stepMs,
  };
  if (have !== undefined) op.tstampParam = have;
  return { op };
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('text/plain').send('Requested resource not found.\r\n');
}

/**
 * Answer a stats request whose bucket id names a service section (buckets.ts hands every `@…` id here); undefined
 * when the id is no section (the caller answers it as a bucket name: 404).
 */
export async function answerSection(ctx: SimContext, id: string, q: SampleQuery, nodeName: string | undefined, reply: FastifyReply): Promise<unknown> {
  const sec = parseSection(ctx, id);
  if (!sec) return undefined;
  if (sec.bucket !== undefined && !ctx.buckets.some((b) => b.name === sec.bucket)) return notFound(reply);
  const nodes = sectionNodes(ctx, sec.service);
  const status = new Map(effectiveNodes(ctx).map((n) => [n.hostname, n.status]));
  const up = (n: SimNode): boolean => status.get(n.hostname) !== 'unhealthy';
  if (nodeName === undefined) {
    const live = nodes.filter(up);
    await gatherDelay(ctx, live);
    return sectionEnvelope(ctx, id, q, live);
  }
  if (!ctx.nodes.some((n) => n.hostname === nodeName)) return notFound(reply);
  const node = nodes.find((n) => n.hostname === nodeName);
  if (!node) return notFound(reply);
  await gatherDelay(ctx, [node]);
  return { hostname: node.hostname, ...sectionEnvelope(ctx, id, q, up(node) ? [node] : []) };
}

export const serviceStatsModule: SimModule = (_app, ctx) => {
  const wanted = Number(ctx.options.knobs.analyticsNodes ?? (ctx.options.scenario === 'demo' ? 1 : 0));
  for (const n of ctx.nodes.slice(0, Number.isFinite(wanted) ? wanted : 0)) if (!n.services.includes('cbas')) n.services.push('cbas');
};

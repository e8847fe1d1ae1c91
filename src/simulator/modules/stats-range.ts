/**
 * Couchbase 7.0+ statistics, answered from the native model of ../native.ts (the same model as the legacy
 * envelopes of buckets.ts and xdcr.ts):
 *   POST /pools/default/stats/range              a JSON array of queries → an array of answers, same order
 *   GET  /pools/default/stats/range/<metric>[/<function>…]?<label>=<regex>&start=…&step=…
 *   GET  /metrics                                native exposition of the node the simulator answers as
 *   GET  /_node/<host:port>/metrics              native exposition of any simulated node (basic auth, faults)
 *   GET  /prometheus_sd_config                   7.2.1+: the nodes as Prometheus HTTP/file SD targets
 * A profile before 7.0 (../profiles.ts) answers all of them 404, as a 6.x cluster manager does; before 7.2.1
 * /prometheus_sd_config answers 404.
 *
 * Queries (couchbase/docs-server rest-statistics-single/-multiple, ns_server menelaus_web_stats.erl):
 * - `metric`: a list of `{label, value, operator}` (`=` default, `!=`, `=~`, `!~` anchored like PromQL, `any`
 *   and `not_any` with a list of values); anything else, an object `{label: value}` included, answers 400
 *   `must be a list of JSON objects` (menelaus_web_stats.erl validate_metric_json/2). Labels: `name`, `bucket`, `instance` (kv, ns_server, xdcr,
 *   and for the services of ../services.ts n1ql, index, fts, eventing, cbas), `state`, `op`, `result`,
 *   `sourceBucketName`, `targetClusterUUID`, `targetBucketName`, `pipelineType`; the services' `scope`,
 *   `collection`, `index` (index, fts), `functionName` (eventing), `proc` (sysproc_*), `disk` (sys_disk_usage_ratio).
 * - `applyFunctions`: first at most one of rate, irate, increase, delta, idelta, deriv, avg/min/max_over_time;
 *   then sum, min, max, avg (drop every label), p1-p100 (histograms: none here, so no data).
 * - `start`/`end`: epoch seconds, or negative = seconds before now (default -60 and now); `step` (default
 *   10 s) and `timeWindow` (default 1m): Prometheus durations; `alignTimestamps` puts start and end on
 *   multiples of the step; `nodes`: host:port list (default every node of the cluster in any membership state,
 *   menelaus_web_node:get_hostnames(Req, any)); `timeout` (ms, 1-300000, default 60000): a node slower than it
 *   (knob nodeFaults[host].slowMs) answers in `errors` (`Request timed out`) and the answer comes at the
 *   timeout instead of waiting for it, as read_metrics_response does; `nodesAggregation` (POST) or
 *   `aggregationFunction` (GET): sum, min, max, avg merge the nodes' series with equal labels.
 * - Answer: `{data: [{metric: {nodes: [...], name, instance, bucket, …}, values: [[ts, "value"], …]}],
 *   errors: [{node, error}], startTimestamp, endTimestamp}`; values are strings, timestamps epoch seconds.
 *   An unknown metric answers no data, not an error. A node that is down (unhealthy) answers in `errors`
 *   (`Node is not available`), as does every node for a query Prometheus refuses (a bad regex, a range
 *   function after an aggregation): the other queries of the batch are unaffected.
 * - A malformed request answers 400 `{"errors": {"<field>": "<reason>"}}` (POST: the body is not a JSON
 *   array of objects, `metric` missing or empty, an unknown function or key, a bad duration, `end` < `start`,
 *   an unknown node); GET with no metric or an unknown function answers 404, as Couchbase does.
 *
 * Fault `partial_errors` (POST /_sim/faults `{match: '/pools/default/stats/range', kind: 'partial_errors',
 * query: 1, node: 'cb2.cbsim.local:8091'}`): query `query` (default 0) of the next answers loses node
 * `node`'s series (default: every node's) and lists that node in `errors` with `error` (default `Request
 * timed out`); the other queries answer in full.
 *
 * /metrics: the Prometheus text format (HELP, TYPE, one line per series), current values of the node's kv,
 * ns_server and xdcr metrics and of the services it runs (query, index, Search, eventing, analytics, processes); a
 * non-data node exposes no kv or xdcr series; a node that is down (unhealthy in the scenario or by
 * knob `unhealthyNodes`) closes the connection without answering. /prometheus_sd_config: `type` json (default) or
 * yaml, `port` secure (18091, default) or insecure (8091), `clusterLabels` none (default), uuidOnly or
 * uuidAndName (labels cluster_uuid, cluster_name). Knob `prometheusSdLocal: true` points the targets at the
 * simulator itself (one group per node: `__metrics_path__` = /_node/<host:port>/metrics, `instance` = the
 * node) so a real Prometheus can scrape every simulated node.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { nativeWindow, nodeNativeIndex } from '../native.js';
import type { NativeSeries } from '../native.js';
import { PromqlError, compileMatchers, durationSeconds, evaluate, formatValue, validFunction } from '../promql.js';
import type { EvalSeries, MatchOp, Matcher } from '../promql.js';
import type { FaultRule, SimContext, SimModule, SimNode } from '../types.js';
import { effectiveNodes, nodeFault } from './cluster.js';

const CLUSTER_UUID = '8ebd144e243c942109c19842bdec9cdd';
const AGGREGATIONS = ['sum', 'min', 'max', 'avg'] as const;
type Aggregation = (typeof AGGREGATIONS)[number];

class BadRequest extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

interface Query {
  readonly matchers: readonly Matcher[];
  readonly functions: readonly string[];
  readonly window: number;
  readonly start: number;
  readonly end: number;
  readonly step: number;
  readonly nodes: readonly SimNode[];
  readonly aggregation: Aggregation | undefined;
  /** ms the cluster manager waits for the nodes (menelaus_web_stats read_metrics_response). */
  readonly timeout: number;
}

/** ?DEFAULT_PROMETHEUS_QUERY_TIMEOUT: a query without `timeout` waits up to 60 s for its nodes. */
const DEFAULT_TIMEOUT_MS = 60_000;

interface RawQuery {
  metric: Matcher[];
  functions: string[];
  timeWindow?: unknown;
  step?: unknown;
  start?: unknown;
  end?: unknown;
  nodes?: string[] | undefined;
  aggregation?: unknown;
  aggregationKey: string;
  alignTimestamps?: unknown;
  timeout?: unknown;
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('text/plain').send('Not found.\r\n');
}

function intOf(field: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n)) throw new BadRequest(field, 'The value must be an integer');
  return n;
}

function findNode(ctx: SimContext, name: string): SimNode | undefined {
  return ctx.nodes.find((n) => n.hostname === name || n.hostname.replace(/:\d+$/, '') === name);
}

/** Validate one query as ns_server's validators do; throws BadRequest. */
function normalize(ctx: SimContext, raw: RawQuery): Query {
  if (raw.metric.length === 0) throw new BadRequest('metric', 'must not be empty');
  for (const f of raw.functions) if (!validFunction(f)) throw new BadRequest('applyFunctions', 'invalid list of functions');
  const window = raw.timeWindow === undefined ? 60 : durationSeconds(raw.timeWindow);
  if (window === undefined) throw new BadRequest('timeWindow', 'invalid interval');
  const step = raw.step === undefined ? 10 : durationSeconds(raw.step);
  if (step === undefined) throw new BadRequest('step', 'invalid interval');
  const nowSec = Math.floor(ctx.now() / 1000);
  const abs = (v: number | undefined, dflt: number): number => (v === undefined ? dflt : v < 0 ? nowSec + v : v);
  let start = abs(intOf('start', raw.start), nowSec - 60);
  let end = abs(intOf('end', raw.end), nowSec);
  if (end < start) throw new BadRequest('end', 'The value must be greater than or equal to start');
  const timeout = intOf('timeout', raw.timeout);
  if (timeout !== undefined && (timeout < 1 || timeout > 300_000)) throw new BadRequest('timeout', 'The value must be between 1 and 300000');
  if (raw.alignTimestamps === true || raw.alignTimestamps === 'true') {
    start = Math.ceil(start / step) * step;
    end = Math.floor(end / step) * step;
  }
  if ((end - start) / step > 11_000) throw new BadRequest('step', 'exceeded maximum resolution of 11,000 points per timeseries');
  let nodes = ctx.nodes;
  if (raw.nodes !== undefined) {
    const unknown = raw.nodes.filter((n) => findNode(ctx, n) === undefined);
    if (unknown.length > 0) throw new BadRequest('nodes', `Unknown hostnames: ${JSON.stringify(unknown)}`);
    nodes = raw.nodes.map((n) => findNode(ctx, n) as SimNode);
  }
  let aggregation: Aggregation | undefined;
  if (raw.aggregation !== undefined && raw.aggregation !== 'none') {
    if (!(AGGREGATIONS as readonly unknown[]).includes(raw.aggregation)) throw new BadRequest(raw.aggregationKey, 'The value must be one of the following: [max,min,avg,sum,none]');
    aggregation = raw.aggregation as Aggregation;
  }
  return { matchers: raw.metric, functions: raw.functions, window, start, end, step, nodes, aggregation, timeout: timeout ?? DEFAULT_TIMEOUT_MS };
}

const POST_KEYS = new Set(['metric', 'applyFunctions', 'nodes', 'nodesAggregation', 'start', 'end', 'step', 'timeWindow', 'timeout', 'alignTimestamps']);
const OPS: readonly MatchOp[] = ['=', '!=', '=~', '!~', 'any', 'not_any'];

function postQuery(item: unknown): RawQuery {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new BadRequest('_', 'Unexpected Json: each query must be a JSON object');
  const o = item as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!POST_KEYS.has(k)) throw new BadRequest(k, 'Unsupported key');
  if (o.metric === undefined) throw new BadRequest('metric', 'The value must be supplied');
  let metric: Matcher[];
  if (Array.isArray(o.metric)) {
    metric = o.metric.map((m: unknown) => {
      const e = m as { label?: unknown; value?: unknown; operator?: unknown };
      const op = (e.operator ?? '=') as MatchOp;
      const valueOk = typeof e.value === 'string' || (Array.isArray(e.value) && (op === 'any' || op === 'not_any') && e.value.every((v) => typeof v === 'string'));
      if (typeof e !== 'object' || e === null || Array.isArray(e)) throw new BadRequest('metric', 'must be a list of JSON objects');
      // validate_label_props/1: only label, value, operator; label and value required; a known operator.
      const unknown = Object.keys(e).find((k) => !['label', 'value', 'operator'].includes(k));
      if (unknown !== undefined) throw new BadRequest('metric', `unknown label prop: ${unknown}`);
      if (e.label === undefined || e.value === undefined) throw new BadRequest('metric', "all metric labels must contain 'label' and 'value' keys");
      if (!OPS.includes(op)) throw new BadRequest('metric', `invalid operator: ${JSON.stringify(op)}`);
      if (typeof e.label !== 'string') throw new BadRequest('metric', 'Label name must be a string');
      if (!valueOk) throw new BadRequest('metric', `label value for ${e.label} must be ${op === 'any' || op === 'not_any' ? `a list of strings when used with '${op}' operation` : 'a string'}`);
      return { label: e.label, op, value: e.value as string | string[] };
    });
  } else {
    // menelaus_web_stats.erl validate_metric_json/2: anything but a list (an object `{label: value}` included)
    // is refused.
    throw new BadRequest('metric', 'must be a list of JSON objects');
  }
  const fns = o.applyFunctions;
  if (fns !== undefined && (!Array.isArray(fns) || fns.some((f) => typeof f !== 'string'))) throw new BadRequest('applyFunctions', 'Must be an array of non-empty strings');
  const nodes = o.nodes;
  if (nodes !== undefined && (!Array.isArray(nodes) || nodes.some((f) => typeof f !== 'string'))) throw new BadRequest('nodes', 'Must be an array of non-empty strings');
  return {
    metric,
    functions: (fns as string[] | undefined) ?? [],
    timeWindow: o.timeWindow,
    step: o.step,
    start: o.start,
    end: o.end,
    nodes: nodes as string[] | undefined,
    aggregation: o.nodesAggregation,
    aggregationKey: 'nodesAggregation',
    alignTimestamps: o.alignTimestamps,
    timeout: o.timeout,
  };
}

const GET_GENERAL = new Set(['start', 'end', 'step', 'timeWindow', 'nodes', 'aggregationFunction', 'timeout', 'alignTimestamps']);

function getQuery(metricName: string, functions: string[], query: Record<string, unknown>): RawQuery {
  const first = (v: unknown): unknown => (Array.isArray(v) ? v[v.length - 1] : v);
  const metric: Matcher[] = [{ label: 'name', op: '=', value: metricName }];
  for (const [k, v] of Object.entries(query)) if (!GET_GENERAL.has(k)) metric.push({ label: k, op: '=~', value: String(first(v)) });
  const nodes = first(query.nodes);
  return {
    metric,
    functions,
    timeWindow: first(query.timeWindow),
    step: first(query.step),
    start: first(query.start),
    end: first(query.end),
    nodes: typeof nodes === 'string' ? nodes.split(/[, ]+/).filter((n) => n !== '') : undefined,
    aggregation: first(query.aggregationFunction),
    aggregationKey: 'aggregationFunction',
    alignTimestamps: first(query.alignTimestamps),
    timeout: first(query.timeout),
  };
}

function partialFault(req: FastifyRequest): FaultRule | undefined {
  const f = (req as unknown as { simFault?: FaultRule }).simFault;
  return f?.kind === 'partial_errors' ? f : undefined;
}

interface Answer {
  data: Array<{ metric: Record<string, unknown>; values: Array<[number, string]> }>;
  errors: Array<{ node: string; error: string }>;
  startTimestamp: number;
  endTimestamp: number;
}

/** How long the cluster manager waits for the nodes a query asks (the slowest, up to its timeout). */
function waitMs(ctx: SimContext, q: Query): number {
  const status = new Map(effectiveNodes(ctx).map((n) => [n.hostname, n.status]));
  let ms = 0;
  for (const n of q.nodes) if (status.get(n.hostname) !== 'unhealthy') ms = Math.max(ms, Math.min(nodeFault(ctx, n.hostname).slowMs ?? 0, q.timeout));
  return ms;
}

/** Answer after the slowest node asked (a batch's queries wait together, from the same start). */
async function held<T>(ctx: SimContext, queries: readonly Query[], value: T): Promise<T> {
  const ms = Math.max(0, ...queries.map((q) => waitMs(ctx, q)));
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
  return value;
}

function answer(ctx: SimContext, q: Query, failing: { node?: string | undefined; error: string } | undefined): Answer {
  const times: number[] = [];
  for (let t = q.start; t <= q.end; t += q.step) times.push(t);
  const status = new Map(effectiveNodes(ctx).map((n) => [n.hostname, n.status]));
  const { first, last } = nativeWindow(ctx);
  const errors: Answer['errors'] = [];
  const perNode: Array<{ node: string; series: EvalSeries[] }> = [];
  let match: ((labels: Readonly<Record<string, string>>) => boolean) | undefined;
  let refused: string | undefined;
  try {
    match = compileMatchers(q.matchers);
  } catch (e) {
    if (!(e instanceof PromqlError)) throw e;
    refused = e.message;
  }
  for (const node of q.nodes) {
    if (failing && (failing.node === undefined || failing.node === node.hostname)) {
      errors.push({ node: node.hostname, error: failing.error });
      continue;
    }
    if (status.get(node.hostname) === 'unhealthy') {
      // read_metrics_response: a node whose ns_server_stats is down answers `down`.
      errors.push({ node: node.hostname, error: 'Node is not available' });
      continue;
    }
    if ((nodeFault(ctx, node.hostname).slowMs ?? 0) > q.timeout) {
      // read_metrics_response: no answer within the query's timeout (measured from the request's start).
      errors.push({ node: node.hostname, error: 'Request timed out' });
      continue;
    }
    if (refused !== undefined || !match) {
      errors.push({ node: node.hostname, error: refused ?? 'Unexpected server error' });
      continue;
    }
    const m = match;
    const index = nodeNativeIndex(ctx, node);
    const byName = q.matchers.find((x) => x.label === 'name' && x.op === '=');
    const candidates = byName ? (index.byName.get(byName.value as string) ?? []) : index.all;
    const selected = candidates.filter((s: NativeSeries) => m({ name: s.name, instance: s.instance, ...s.labels }));
    try {
      perNode.push({ node: node.hostname, series: evaluate(selected, { functions: q.functions, window: q.window, times }, first, last) });
    } catch (e) {
      if (!(e instanceof PromqlError)) throw e;
      errors.push({ node: node.hostname, error: e.message });
    }
  }
  const data: Answer['data'] = [];
  if (q.aggregation === undefined) {
    for (const { node, series } of perNode) {
      for (const s of series) data.push({ metric: { nodes: [node], ...s.labels }, values: s.points.map(([t, v]) => [t, formatValue(v)]) });
    }
  } else {
    const nodes = perNode.map((p) => p.node);
    const groups = new Map<string, { labels: Record<string, string>; byTime: Map<number, number[]> }>();
    for (const { series } of perNode) {
      for (const s of series) {
        const key = JSON.stringify(Object.entries(s.labels).sort());
        const g = groups.get(key) ?? groups.set(key, { labels: s.labels, byTime: new Map() }).get(key);
        for (const [t, v] of s.points) (g?.byTime.get(t) ?? g?.byTime.set(t, []).get(t))?.push(v);
      }
    }
    for (const g of groups.values()) {
      const values: Array<[number, string]> = [];
      for (const t of [...g.byTime.keys()].sort((a, b) => a - b)) {
        const vs = g.byTime.get(t) as number[];
        const sum = vs.reduce((a, v) => a + v, 0);
        const agg = q.aggregation === 'sum' ? sum : q.aggregation === 'avg' ? sum / vs.length : q.aggregation === 'min' ? Math.min(...vs) : Math.max(...vs);
        values.push([t, formatValue(agg)]);
      }
      data.push({ metric: { nodes, aggregationFunction: q.aggregation, ...g.labels }, values });
    }
  }
  return { data, errors, startTimestamp: q.start, endTimestamp: q.end };
}

function badRequest(reply: FastifyReply, e: BadRequest): FastifyReply {
  return reply.code(400).send({ errors: { [e.field]: e.message } });
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** A node's native exposition in the Prometheus text format (current values). */
export function exposition(ctx: SimContext, node: SimNode): string {
  const sec = Math.floor(ctx.now() / 1000);
  const families = new Map<string, { series: NativeSeries[] }>();
  for (const s of nodeNativeIndex(ctx, node).all) (families.get(s.family) ?? families.set(s.family, { series: [] }).get(s.family))?.series.push(s);
  const lines: string[] = [];
  for (const [name, { series }] of families) {
    const head = series[0] as NativeSeries;
    lines.push(`# HELP ${name} ${head.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${name} ${head.type}`);
    for (const s of series) {
      const v = s.at(sec);
      if (v === undefined) continue;
      const labels = Object.entries(s.labels)
        .map(([k, lv]) => `${k}="${escapeLabel(lv)}"`)
        .join(',');
      lines.push(`${s.name}${labels ? `{${labels}}` : ''} ${formatValue(v)}`);
    }
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

export const statsRangeModule: SimModule = (app, ctx) => {
  const range = (): boolean => ctx.options.profile.rangeApi;

  app.post('/pools/default/stats/range', async (req, reply) => {
    if (!range()) return notFound(reply);
    let body: unknown = req.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        return badRequest(reply, new BadRequest('_', 'Unexpected Json: the body is not JSON'));
      }
    }
    if (!Array.isArray(body)) return badRequest(reply, new BadRequest('_', 'Unexpected Json: the body must be a JSON array'));
    let queries: Query[];
    try {
      queries = body.map((item) => normalize(ctx, postQuery(item)));
    } catch (e) {
      if (e instanceof BadRequest) return badRequest(reply, e);
      throw e;
    }
    const fault = partialFault(req);
    return held(ctx, queries, queries.map((q, i) => answer(ctx, q, fault && (fault.query ?? 0) === i ? { node: fault.node, error: fault.error ?? 'Request timed out' } : undefined)));
  });

  app.get<{ Params: { '*': string }; Querystring: Record<string, unknown> }>('/pools/default/stats/range/*', async (req, reply) => {
    if (!range()) return notFound(reply);
    const [metric, ...functions] = req.params['*'].split('/').filter((p) => p !== '');
    if (metric === undefined || functions.some((f) => !validFunction(f))) return notFound(reply);
    let q: Query;
    try {
      q = normalize(ctx, getQuery(metric, functions, req.query));
    } catch (e) {
      if (e instanceof BadRequest) return badRequest(reply, e);
      throw e;
    }
    const fault = partialFault(req);
    return held(ctx, [q], answer(ctx, q, fault && (fault.query ?? 0) === 0 ? { node: fault.node, error: fault.error ?? 'Request timed out' } : undefined));
  });

  const metrics = (node: SimNode | undefined, req: FastifyRequest, reply: FastifyReply): FastifyReply | string => {
    if (!range() || !node) return notFound(reply);
    if (effectiveNodes(ctx).find((n) => n.hostname === node.hostname)?.status === 'unhealthy') {
      // A node that is down answers nothing: its scrape fails, as a connection to a dead host does.
      req.raw.socket.destroy();
      return reply;
    }
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(exposition(ctx, node));
  };
  app.get('/metrics', async (req, reply) => metrics(ctx.nodes.find((n) => n.thisNode) ?? ctx.nodes[0], req, reply));
  app.get<{ Params: { node: string } }>('/_node/:node/metrics', async (req, reply) => metrics(ctx.nodes.find((n) => n.hostname === req.params.node), req, reply));

  app.get<{ Querystring: Record<string, string | undefined> }>('/prometheus_sd_config', async (req, reply) => {
    if (!ctx.options.profile.prometheusSd) return notFound(reply);
    const q = req.query;
    const check = (key: string, allowed: readonly string[]): string | undefined => {
      const v = q[key];
      return v === undefined || allowed.includes(v) ? undefined : key;
    };
    const bad =
      check('type', ['json', 'yaml']) ??
      check('port', ['secure', 'insecure']) ??
      check('network', ['default', 'external']) ??
      check('clusterLabels', ['none', 'uuidOnly', 'uuidAndName']) ??
      check('disposition', ['inline', 'attachment']);
    if (bad !== undefined) return reply.code(400).send({ errors: { [bad]: 'The value is not one of the allowed values' } });
    const labels: Record<string, string> = {};
    if (q.clusterLabels === 'uuidOnly' || q.clusterLabels === 'uuidAndName') labels.cluster_uuid = CLUSTER_UUID;
    if (q.clusterLabels === 'uuidAndName') labels.cluster_name = 'cbsim';
    const port = q.port === 'insecure' ? 8091 : 18091;
    const nodes = effectiveNodes(ctx).filter((n) => n.membership === 'active');
    const local = ctx.options.knobs.prometheusSdLocal === true;
    const groups = local
      ? nodes.map((n) => ({
          targets: [ctx.baseUrl().replace(/^https?:\/\//, '')],
          labels: { ...labels, __metrics_path__: `/_node/${n.hostname}/metrics`, instance: n.hostname },
        }))
      : [{ targets: nodes.map((n) => `${n.hostname.replace(/:\d+$/, '')}:${port}`), ...(Object.keys(labels).length > 0 ? { labels } : {}) }];
    if (q.disposition === 'attachment') void reply.header('content-disposition', `attachment; filename=couchbase_sd_config_.${q.type === 'yaml' ? 'yaml' : 'json'}`);
    if (q.type !== 'yaml') return groups;
    const yaml = groups
      .map((g) => {
        const lines = ['- targets:', ...g.targets.map((t) => `  - '${t}'`)];
        const l = (g as { labels?: Record<string, string> }).labels;
        if (l) lines.push('  labels:', ...Object.entries(l).map(([k, v]) => `    ${k}: '${v}'`));
        return lines.join('\n');
      })
      .join('\n');
    return reply.type('application/x-yaml').send(`${yaml}\n`);
  });
};

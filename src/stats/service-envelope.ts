/**
 * The envelope source of the service statistics (before 7.0, and on request): the legacy service sections
 * `GET /pools/default/buckets/@<section>/stats` (the cluster-wide answer, which SUMS the service's nodes) and, for
 * per-node specs, `GET /pools/default/buckets/@<section>/nodes/<host:port>/stats` for each node of the service (a
 * percentage or a per-node series summed over the nodes would be wrong). Each answer is reduced by bucket_stats'
 * sampling rules (samples.ts): the zoom that covers the interval, `haveTStamp` after the first answer, a rate the
 * mean of the per-second samples since the previous poll, a level (or running total) the newest sample, a mean of
 * two the ratio of the two counters' sums over the same new samples (absent when the denominator's is 0).
 *
 * A request that fails is that section's (and node's) item failure; a 404 on a node's route means the node no
 * longer runs the service (skipped); every request failing fails the poll.
 */
import { statsEnvelopeSchema } from '../couchbase/buckets.js';
import { CbwError } from '../errors.js';
import type { StatsEnvelope } from '../couchbase/buckets.js';
import type { StatsContext } from './context.js';
import { alignedFrom, finite, haveTStampFor, latest, mean, sampleWindow, toBaseUnit, zoomFor } from './samples.js';
import type { SampleMemo, Zoom } from './samples.js';
import { kindsOf } from './service-range.js';
import { everyNode, legacyKeys } from './service-table.js';
import type { ServiceSpec, ServiceStatRow } from './service-table.js';
import { ITEM_WIDE, itemOf as itemValuesOf, setOf } from './values.js';
import type { ItemValues, SourceValues, StatValues } from './values.js';

export const SERVICE_STATS_ROUTE = '/pools/default/buckets/@{section}/stats';
export const SERVICE_NODE_STATS_ROUTE = '/pools/default/buckets/@{section}/nodes/{node}/stats';

/** The memo key of one section's answer (and node's) in the collector's state. */
function memoKey(spec: ServiceSpec, section: string, node: string | undefined): string {
  return `\u0000env:${spec.id}:${section}:${node ?? ''}`;
}

/**
 * Σnum / Σden over the new samples where both are finite (the arrays aligned on their newest sample); undefined when
 * no sample is new or the denominator's sum is not above 0. Pure.
 */
export function ratioOfSums(num: readonly unknown[], den: readonly unknown[], fromNum: number, fromDen: number): number | undefined {
  let sn = 0;
  let sd = 0;
  const shift = den.length - num.length;
  for (let i = Math.max(0, fromNum); i < num.length; i++) {
    const j = i + shift;
    if (j < fromDen || j < 0) continue;
    const a = num[i];
    const b = den[j];
    if (!finite(a) || !finite(b)) continue;
    sn += a;
    sd += b;
  }
  return sd > 0 ? sn / sd : undefined;
}

/**
 * One row's value from an item's samples (stat key → samples), `from` the first new sample index of the answer's
 * timestamp array of length `tsLength`; in the family's unit. Absent (undefined result) when the envelope does not
 * name the stat; `{ value: undefined }` when it names it without a value this poll. Pure.
 */
export function envelopeRowValue(row: ServiceStatRow, samples: ReadonlyMap<string, readonly unknown[]>, from: number, tsLength: number, fresh: boolean): { value: number | undefined } | undefined {
  const { num, den } = legacyKeys(row);
  const scale = row.scale ?? 1;
  const a = num === undefined ? undefined : samples.get(num);
  if (row.kind === 'mean_of_two') {
    const b = den === undefined ? undefined : samples.get(den);
    if (a === undefined && b === undefined) return undefined;
    if (a === undefined || b === undefined || !fresh) return { value: undefined };
    const v = ratioOfSums(a, b, alignedFrom(from, tsLength, a.length), alignedFrom(from, tsLength, b.length));
    return { value: v === undefined ? undefined : toBaseUnit(v, scale) };
  }
  if (a === undefined) return undefined;
  if (row.kind === 'rate') {
    if (!fresh) return { value: undefined };
    const v = mean(a, alignedFrom(from, tsLength, a.length));
    return { value: v === undefined ? undefined : toBaseUnit(v, scale) };
  }
  const v = latest(a);
  return { value: v === undefined ? undefined : toBaseUnit(v, scale) };
}

/** One answer's samples split by item (keyOf), each item's stat → samples. Pure. */
export function splitSamples(spec: ServiceSpec, section: string, env: StatsEnvelope, node: string | undefined): Map<string, Map<string, unknown[]>> {
  const out = new Map<string, Map<string, unknown[]>>();
  const samples = env.op.samples;
  const keyOf = spec.envelope?.keyOf;
  for (const key in samples) {
    if (key === 'timestamp') continue;
    const raw = samples[key];
    if (!Array.isArray(raw)) continue;
    const at = keyOf === undefined ? { item: node ?? ITEM_WIDE, stat: key } : keyOf(section, key);
    if (at === undefined) continue;
    let m = out.get(at.item);
    if (m === undefined) out.set(at.item, (m = new Map()));
    m.set(at.stat, raw as unknown[]);
  }
  return out;
}

/** One section's answer (cluster-wide, or one node's) into `items`. False when it is gone (404). */
async function pollSection(ctx: StatsContext, spec: ServiceSpec, zoom: Zoom, section: string, node: string | undefined, items: Map<string, ItemValues>): Promise<boolean> {
  const key = memoKey(spec, section, node);
  const memo = ctx.state.get(key) as SampleMemo | undefined;
  const ask = async (have: number | undefined): Promise<StatsEnvelope | undefined> => {
    const query: Record<string, string | number> = { zoom: zoom.name };
    if (have !== undefined) query.haveTStamp = have;
    const res =
      node === undefined
        ? await ctx.client.requestJson(SERVICE_STATS_ROUTE, { section }, statsEnvelopeSchema, { query, allowStatus: [404] })
        : await ctx.client.requestJson(SERVICE_NODE_STATS_ROUTE, { section, node }, statsEnvelopeSchema, { query, allowStatus: [404] });
    return res.status === 404 ? undefined : res.data;
  };
  const have = haveTStampFor(memo, zoom);
  let env = await ask(have);
  const ts0 = env?.op.samples.timestamp;
  if (env !== undefined && have !== undefined && Array.isArray(ts0) && ts0.length === 0) env = await ask(undefined);
  if (env === undefined) {
    ctx.skipped(node === undefined ? 'section_gone' : 'node_gone', node === undefined ? `@${section}` : `@${section} on ${node}`);
    ctx.state.delete(key);
    return false;
  }
  const tsRaw = env.op.samples.timestamp;
  const ts = Array.isArray(tsRaw) ? (tsRaw as unknown[]) : undefined;
  const win = sampleWindow(ts, env.op.lastTStamp, memo, ctx.now(), ctx.options.interval, zoom.stepMs);
  if (win.memo === undefined) ctx.state.delete(key);
  else ctx.state.set(key, win.memo);
  const tsLength = ts?.length ?? 0;
  const split = splitSamples(spec, section, env, node);
  // A node that answers its section without a statistic (a node that is down answers only timestamps): missing.
  if (node !== undefined && split.size === 0 && everyNode(spec)) {
    const err = new CbwError('CBW_ERR_NETWORK', `GET /pools/default/buckets/@${section}/nodes/${node}/stats: no statistics in the answer (is the node down?)`);
    err.brief = `@${section}: a node answered no statistics`;
    ctx.itemFailed(`@${section} on ${node}`, err);
    return true;
  }
  for (const [item, samples] of split) {
    const values: StatValues = new Map();
    for (const row of spec.rows) {
      const got = envelopeRowValue(row, samples, ts === undefined ? 0 : win.from, ts === undefined ? 0 : tsLength, win.fresh);
      if (got !== undefined) values.set(row.stat, got.value);
    }
    if (values.size === 0) continue;
    const iv = itemValuesOf(items, item);
    if (win.last !== undefined && (iv.newest === undefined || win.last > iv.newest)) iv.newest = win.last;
    const set = setOf(iv, spec.perNode ? (node ?? ITEM_WIDE) : ITEM_WIDE);
    for (const [k, v] of values) set.set(k, v);
  }
  return true;
}

/**
 * One spec's neutral values from the envelopes: every section of the spec, cluster-wide (perNode false) or on each
 * of `nodes` (perNode). Memos of sections and nodes no longer asked are forgotten.
 */
export async function serviceEnvelopeValues(ctx: StatsContext, spec: ServiceSpec, nodes: readonly string[]): Promise<SourceValues> {
  const env = spec.envelope;
  if (env === undefined) throw new Error(`service statistics ${spec.id}: no envelope source`);
  const sections = typeof env.sections === 'function' ? await env.sections(ctx) : env.sections;
  const zoom = zoomFor(ctx.options.interval);
  const asks = sections.flatMap((section) => (spec.perNode ? nodes.map((node) => ({ section, node })) : [{ section, node: undefined as string | undefined }]));
  const wanted = new Set(asks.map((a) => memoKey(spec, a.section, a.node)));
  const prefix = `\u0000env:${spec.id}:`;
  for (const k of [...ctx.state.keys()]) if (k.startsWith(prefix) && !wanted.has(k)) ctx.state.delete(k);
  // Each answer lands in items of its own, merged in the order asked whatever order the answers come in.
  const parts = asks.map(() => new Map<string, ItemValues>());
  const results = await Promise.allSettled(asks.map((a, i) => pollSection(ctx, spec, zoom, a.section, a.node, parts[i] as Map<string, ItemValues>)));
  if (ctx.signal.aborted) throw ctx.signal.reason;
  const failed = results.filter((r) => r.status === 'rejected');
  if (failed.length > 0 && failed.length === asks.length) throw (failed[0] as PromiseRejectedResult).reason;
  const items = new Map<string, ItemValues>();
  results.forEach((r, i) => {
    const a = asks[i] as { section: string; node: string | undefined };
    if (r.status === 'rejected') {
      ctx.itemFailed(a.node === undefined ? `@${a.section}` : `@${a.section} on ${a.node}`, r.reason);
      return;
    }
    for (const [item, iv] of parts[i] as Map<string, ItemValues>) {
      const into = itemValuesOf(items, item);
      if (iv.newest !== undefined && (into.newest === undefined || iv.newest > into.newest)) into.newest = iv.newest;
      for (const [set, values] of iv.sets) {
        const s = setOf(into, set);
        for (const [k, v] of values) s.set(k, v);
      }
    }
  });
  return { items, kindOf: kindsOf(spec) };
}

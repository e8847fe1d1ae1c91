/**
 * The Search service's active-query endpoints, served on the simulator's own port (nodeServices advertises
 * `fts` there for the node the simulator answers as):
 *   GET  /api/query[?longerThan=D]              every active query of the cluster (7.1+ shape: `<uuid>-<id>` keys)
 *   GET  /api/query/index/:indexName[?longerThan=D]
 *   POST /api/query/:queryID/cancel  {uuid?}    `{status: "ok", msg}`; the query leaves the list
 *   GET  /api/index                             the index definitions (docs-server rest-fts-indexing, "Index
 *                                               Definition"): `{status, indexDefs: {uuid, implVersion, indexDefs:
 *                                               {<name>: {name, type, sourceType, sourceName}}}}`, the bucket of
 *                                               each being its `sourceName`; the indexes of ../services.ts
 * Envelopes and query contexts are the real 7.1+ payloads of fts-api-query/ with the simulator's nodes,
 * indexes and ages; `executionTime` is written by Go's Duration.String().
 *
 * Queries run on the nodes with the `fts` service (node uuids from ctx.nodes) and age with the simulated
 * clock `ctx.now()`. Two kinds:
 *   - churn: slot i starts a query every `period` ms that runs `life` ms (ids grow per cycle), so queries
 *     come and go between polls;
 *   - runaway: a query that never finishes on its own; cancelling it starts the next one at once (new id),
 *     which is slow again after 10 s — so a cancel policy keeps having work in the demo.
 *
 * Scenarios (deterministic):
 *   default / bench: 4 churn slots on 3 indexes, each query lives 0.3–2.5 s: 0–4 active, none slow.
 *   demo:     default + 1 runaway on `travel-hotels` on the second fts node, 42 s old at start (one slow query).
 *   incident: default + 30 always-active churn queries on `travel-hotels` (each under 4 s old: the active
 *             count stays at 30+) + 3 runaways: `travel-hotels` 120 s and 45 s, `travel-landmarks` 15 s old.
 * Knobs:
 *   searchRunaways: number       — number of runaways (overrides the scenario's), ages 42 s, 120 s, 45 s, 15 s…
 *   searchCancelForbidden: true  — the cancel endpoint answers 403 (permission cluster.fts!manage).
 * Fault injection works as everywhere: match `/api/query`, `/api/query/index/:indexName` or
 * `/api/query/:queryID/cancel`.
 */
import { fixture } from '../fixtures.js';
import type { SimContext, SimModule } from '../types.js';
import { simSearchIndexes } from '../services.js';

export const SIM_SEARCH_INDEXES = ['travel-hotels', 'travel-landmarks', 'beer-fts'] as const;

interface Churn {
  index: string;
  node: number;
  period: number;
  life: number;
  offset: number;
}

interface Runaway {
  index: string;
  node: number;
  /** Age at simulator start, ms. */
  initialAge: number;
  generation: number;
  startedAt: number;
}

interface SearchState {
  churn: Churn[];
  runaways: Runaway[];
  /** `<uuid>-<id>` of churn queries cancelled before their natural end. */
  cancelled: Set<string>;
}

export interface SimQuery {
  node: string;
  id: number;
  index: string;
  ageMs: number;
  text: string;
}

const RUNAWAY_AGES = [42_000, 120_000, 45_000, 15_000];
const INCIDENT_AGES = [120_000, 45_000, 15_000];
const RUNAWAY_INDEXES = ['travel-hotels', 'travel-hotels', 'travel-landmarks', 'beer-fts'];

function initState(ctx: SimContext): SearchState {
  const scenario = ctx.options.scenario;
  const churn: Churn[] = [
    { index: 'travel-hotels', node: 0, period: 5000, life: 2500, offset: 0 },
    { index: 'travel-landmarks', node: 1, period: 7000, life: 1200, offset: 1500 },
    { index: 'beer-fts', node: 0, period: 9000, life: 300, offset: 4000 },
    { index: 'travel-hotels', node: 1, period: 6000, life: 2000, offset: 2500 },
  ];
  if (scenario === 'incident') {
    for (let i = 0; i < 30; i++) churn.push({ index: 'travel-hotels', node: i % 2, period: 4000, life: 4000, offset: (i * 137) % 4000 });
  }
  const knob = ctx.options.knobs.searchRunaways;
  const count = typeof knob === 'number' ? knob : scenario === 'demo' ? 1 : scenario === 'incident' ? 3 : 0;
  const runaways: Runaway[] = [];
  for (let i = 0; i < count; i++) {
    const ages = scenario === 'incident' ? INCIDENT_AGES : RUNAWAY_AGES;
    const initialAge = ages[i % ages.length] as number;
    runaways.push({
      index: scenario === 'demo' ? 'travel-hotels' : (RUNAWAY_INDEXES[i % RUNAWAY_INDEXES.length] as string),
      node: scenario === 'demo' ? 1 : i % 2,
      initialAge,
      generation: 0,
      startedAt: ctx.startedAt - initialAge,
    });
  }
  return { churn, runaways, cancelled: new Set() };
}

function ftsNodes(ctx: SimContext): string[] {
  return ctx.nodes.filter((n) => n.services.includes('fts')).map((n) => n.uuid);
}

/** The active queries at simulated time `ctx.now()`. */
export function activeQueries(ctx: SimContext): SimQuery[] {
  const st = ctx.area('search', () => initState(ctx));
  const nodes = ftsNodes(ctx);
  if (nodes.length === 0) return [];
  const texts = templates().map((t) => String((t.QueryContext as { query?: { query?: unknown } }).query?.query ?? ''));
  const now = ctx.now();
  const elapsed = now - ctx.startedAt;
  const out: SimQuery[] = [];
  st.churn.forEach((c, i) => {
    const cycle = Math.floor((elapsed + c.offset) / c.period);
    const start = ctx.startedAt + cycle * c.period - c.offset;
    const age = now - start;
    if (age < 0 || age >= c.life) return;
    const q: SimQuery = {
      node: nodes[c.node % nodes.length]!,
      id: 100 + cycle * st.churn.length + i,
      index: c.index,
      ageMs: age,
      text: texts[i % texts.length] ?? '',
    };
    if (!st.cancelled.has(`${q.node}-${q.id}`)) out.push(q);
  });
  st.runaways.forEach((r, i) => {
    out.push({
      node: nodes[r.node % nodes.length]!,
      // Ids well above the churn range, unique per (runaway, generation).
      id: 1_000_000 + i * 10_000 + r.generation,
      index: r.index,
      ageMs: now - r.startedAt,
      text: 'hotel with free parking and a pool',
    });
  });
  return out;
}

type Template = { QueryContext: Record<string, unknown>; executionTime: string };

function templates(): Template[] {
  const t = fixture<{ filteredActiveQueries: { queryMap: Record<string, Template> } }>('fts-api-query/docs-server-7.1plus-all.json');
  return Object.values(t.filteredActiveQueries.queryMap);
}

function envelope(ctx: SimContext, all: SimQuery[], shown: SimQuery[], extra: Record<string, unknown>): Record<string, unknown> {
  const base = fixture<Record<string, unknown>>('fts-api-query/docs-server-7.1plus-all.json');
  const tpl = templates()[0]!;
  const n = ftsNodes(ctx).length;
  const queryMap: Record<string, unknown> = {};
  for (const q of shown) {
    queryMap[`${q.node}-${q.id}`] = {
      QueryContext: { ...tpl.QueryContext, query: { query: q.text }, index: q.index },
      executionTime: goDurationOfMs(Math.max(0, Math.round(q.ageMs))),
    };
  }
  return {
    ...base,
    stats: { total: n, successful: n },
    totalActiveQueryCount: all.length,
    filteredActiveQueries: { ...extra, queryCount: shown.length, queryMap },
  };
}

/**
 * Go's Duration.String() for a whole number of milliseconds, written here from Go's documented format (not
 * shared with the collector's parser, so the simulator stays an independent oracle): `0s`, `250ms`, `1.5s`,
 * `2m3.004s`, `1h0m0s` — seconds with up to 9 fractional digits and trailing zeros trimmed.
 */
export function goDurationOfMs(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const whole = Math.floor((ms % 60_000) / 1000);
  const frac = ms % 1000;
  const sec = frac === 0 ? `${whole}` : `${whole}.${String(frac).padStart(3, '0').replace(/0+$/, '')}`;
  if (h > 0) return `${h}h${m}m${sec}s`;
  if (m > 0) return `${m}m${sec}s`;
  return `${sec}s`;
}

const GO_UNIT_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, '\u00b5s': 1e-3, '\u03bcs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `longerThan` as Go's time.ParseDuration reads it (sequence of decimal+unit): undefined when absent, null when invalid. */
function longerThanMs(raw: unknown): number | undefined | null {
  if (raw === undefined || raw === '') return undefined;
  const text = String(raw);
  if (text === '0') return 0;
  const parts = [...text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return null;
  return parts.reduce((sum, p) => sum + Number(p[1]) * (GO_UNIT_MS[p[2] as string] as number), 0);
}

export const searchModule: SimModule = (app, ctx) => {
  app.get('/api/index', async () => ({
    status: 'ok',
    indexDefs: {
      uuid: '5b1b3ab4c1a9e7f0',
      implVersion: '5.5.0',
      indexDefs: Object.fromEntries(simSearchIndexes(ctx).map((i) => [i.index, { name: i.index, type: 'fulltext-index', sourceType: 'couchbase', sourceName: i.bucket }])),
    },
  }));
  app.get('/api/query', async (req, reply) => {
    const q = req.query as { longerThan?: string };
    const min = longerThanMs(q.longerThan);
    if (min === null) return reply.code(400).send({ error: `rest_query: invalid longerThan ${JSON.stringify(q.longerThan)}`, status: 'fail' });
    const all = activeQueries(ctx);
    const shown = min === undefined ? all : all.filter((x) => x.ageMs > min);
    return envelope(ctx, all, shown, q.longerThan !== undefined ? { longerThan: q.longerThan } : {});
  });

  app.get('/api/query/index/:indexName', async (req, reply) => {
    const { indexName } = req.params as { indexName: string };
    const q = req.query as { longerThan?: string };
    if (!(SIM_SEARCH_INDEXES as readonly string[]).includes(indexName)) {
      return reply.code(400).send({ error: `rest_index: Query, indexName: ${indexName}, err: index not found`, status: 'fail' });
    }
    const min = longerThanMs(q.longerThan);
    if (min === null) return reply.code(400).send({ error: `rest_query: invalid longerThan ${JSON.stringify(q.longerThan)}`, status: 'fail' });
    const all = activeQueries(ctx);
    const shown = all.filter((x) => x.index === indexName && (min === undefined || x.ageMs > min));
    return envelope(ctx, all, shown, { indexName, ...(q.longerThan !== undefined ? { longerThan: q.longerThan } : {}) });
  });

  app.post('/api/query/:queryID/cancel', async (req, reply) => {
    if (ctx.options.knobs.searchCancelForbidden === true || ctx.userOf(req) === 'limited') {
      return reply.code(403).send({ message: 'Forbidden. User needs one of the following permissions', permissions: ['cluster.fts!manage'] });
    }
    const { queryID } = req.params as { queryID: string };
    const body = (req.body ?? {}) as { uuid?: unknown };
    const nodes = ftsNodes(ctx);
    const thisNode = ctx.nodes.find((n) => n.thisNode)?.uuid ?? nodes[0];
    const node = typeof body.uuid === 'string' && body.uuid !== '' ? body.uuid : thisNode;
    if (!/^\d+$/.test(queryID)) return reply.code(400).send({ error: `rest_query_cancel: invalid queryID ${JSON.stringify(queryID)}`, status: 'fail' });
    const id = Number(queryID);
    const hit = activeQueries(ctx).find((q) => q.node === node && q.id === id);
    if (!hit) {
      return reply.code(404).send({ error: `query with ID '${queryID}' on node '${node}' either completed or does not exist`, status: 'fail' });
    }
    const st = ctx.area('search', () => initState(ctx));
    const runaway = st.runaways.find((r, i) => 1_000_000 + i * 10_000 + r.generation === id && nodes[r.node % nodes.length] === node);
    if (runaway) {
      runaway.generation++;
      runaway.startedAt = ctx.now();
    } else {
      st.cancelled.add(`${node}-${id}`);
    }
    return { status: 'ok', msg: `query with ID '${queryID}' on node '${node}' was aborted!` };
  });
};

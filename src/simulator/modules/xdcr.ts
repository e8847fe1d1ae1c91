/**
 * XDCR, answered from a replication model built once from ctx.buckets, ctx.nodes and `replications`:
 *   GET /pools/default/remoteClusters                       references, shaped like docs-server-7.1plus-2refs.json
 *   GET /pools/default/buckets/:bucket/stats/*              one stat of one replication (`endpoint` is
 *       `replications/<uuid>/<source>/<target>/<stat>`, one %2F-encoded segment), shaped like the real per-stat
 *       envelopes: `timestamp` plus `nodeStats` with one array per data node; every zoom of the reference
 *       with its own spacing, haveTStamp and the sampling knobs of ../sampling.ts, as for bucket stats
 *   GET /settings/replications/:id                          per-replication settings (docs-server-7.1plus.json)
 *   tasks list entries (type xdcr) through addTaskProvider, shaped like docs-server-7.1plus-xdcr.json
 * An unknown replication, stat name or source bucket (a test may delete a bucket from ctx.buckets) answers 404.
 *
 * Remote clusters: `dr-east` and `analytics-west` (both hold a bucket named like the source bucket, so two
 * replications from one bucket have the same target bucket name), and in demo and incident a third reference
 * `old-dc` marked `deleted: true` with connectivity RC_ERROR.
 *
 * Replications (bucket i is ctx.buckets[i mod buckets]; there are `replications` of them, 4 by default):
 *   #0 bucket 0 → dr-east/<bucket 0>          the growing one
 *   #1 bucket 0 → analytics-west/<bucket 0>   the draining one
 *   #2 bucket 1 → dr-east/<bucket 1>          paused in demo and incident
 *   #3 bucket 2 → analytics-west/<bucket 2>   with errors in demo and incident
 *   #4… bucket i → (dr-east | analytics-west)/<bucket i>-<i>, steady
 * changes_left of a replication is a total split over the data nodes with uneven weights (rounded per node):
 *   - default: every replication steady, 20–220 (a slow sine around a base drawn from ctx.rand), none paused,
 *     no errors, no deleted reference.
 *   - demo: #0 = 5 000 + 10 per simulated second since start; #1 = 50 000 − 100 per second, down to 0
 *     (drained after 500 s); #2 paused, its backlog frozen at 3 500; #3 lists 2 errors, 250 ms latency and
 *     failing checkpoints.
 *   - incident: as demo but #0 = 20 000 + 50 per second (above the 1 000 floor of CouchbaseXdcrBacklogGrowing
 *     from the start, past the 100 000 of CouchbaseXdcrBacklogHigh after 1 600 s) and #1 = 200 000 − 500 per
 *     second. With `speed` the simulated clock runs faster (e2e: 60, one real second = a simulated minute).
 * Knob `xdcrGrowthPerSec` overrides the growth of #0 (any scenario but default). Knob `xdcrStatValues`
 * (`{ [stat]: (t, node) => number }`, t = real epoch ms) replaces the model of those stats for every replication.
 * The other stats follow each replication's rate (50–500 docs/s from ctx.rand, 0 while paused): documents
 * written/processed/checked grow with time since start, queues and latencies wobble; latencies and checkpoint
 * time are in milliseconds, as Couchbase reports them. rate_replicated, rate_received_from_dcp and
 * bandwidth_usage are what docs_written, docs_received_from_dcp and data_replicated gained in the last second,
 * so their mean over a window is the counters' increase over it (the native xdcr_* counters of ../native.ts).
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { fixture } from '../fixtures.js';
import { sampleTimes } from '../sampling.js';
import type { SampleQuery } from '../sampling.js';
import type { SimContext, SimModule, SimNode } from '../types.js';
import { bucketServers, gatherDelay, liveBucketNodes } from './cluster.js';
import { addTaskProvider } from './tasks.js';

export interface SimRemote {
  readonly name: string;
  readonly uuid: string;
  readonly hostname: string;
  readonly deleted: boolean;
  readonly connectivityStatus: string;
}

export interface SimReplication {
  /** `<remote uuid>/<source>/<target>` */
  readonly id: string;
  readonly remote: SimRemote;
  readonly source: string;
  readonly target: string;
  readonly paused: boolean;
  readonly errors: readonly string[];
  /** changes_left on `node` (host:port) at simulated time t (epoch ms). */
  changesLeft(node: string, t: number): number;
  /** Any of the 20 stat names on `node` at time t; undefined for a name that is not an XDCR stat. */
  stat(name: string, node: string, t: number): number | undefined;
}

const AVG_DOC_BYTES = 800;

export const SIM_XDCR_STATS = [
  'bandwidth_usage',
  'changes_left',
  'data_replicated',
  'docs_checked',
  'docs_failed_cr_source',
  'docs_filtered',
  'docs_opt_repd',
  'docs_received_from_dcp',
  'docs_rep_queue',
  'docs_processed',
  'docs_written',
  'meta_latency_wt',
  'num_checkpoints',
  'num_failedckpts',
  'rate_received_from_dcp',
  'rate_replicated',
  'size_rep_queue',
  'time_committing',
  'wtavg_docs_latency',
  'wtavg_meta_latency',
] as const;
const STAT_SET: ReadonlySet<string> = new Set(SIM_XDCR_STATS);

function uuidOf(key: string): string {
  return createHash('md5').update(key).digest('hex');
}

/** The uuid of the simulated remote cluster named `name` (dr-east, analytics-west, old-dc). */
export function simRemoteUuid(name: string): string {
  return uuidOf(`cbsim-remote-${name}`);
}

function kvNodes(ctx: SimContext): SimNode[] {
  return bucketServers(ctx);
}

/** Uneven per-node shares summing to 1 (real vBucket maps rarely split evenly). */
function nodeShare(ctx: SimContext, node: string): number {
  const nodes = kvNodes(ctx);
  const i = nodes.findIndex((n) => n.hostname === node);
  if (i < 0) return 0;
  const weights = nodes.map((_, j) => 1 + 0.15 * (j - (nodes.length - 1) / 2));
  return (weights[i] as number) / weights.reduce((a, w) => a + w, 0);
}

function remotes(ctx: SimContext): SimRemote[] {
  const list: SimRemote[] = [
    { name: 'dr-east', uuid: simRemoteUuid('dr-east'), hostname: 'dr-east.cbsim.local:8091', deleted: false, connectivityStatus: 'RC_OK' },
    { name: 'analytics-west', uuid: simRemoteUuid('analytics-west'), hostname: 'analytics-west.cbsim.local:8091', deleted: false, connectivityStatus: 'RC_OK' },
  ];
  if (ctx.options.scenario === 'demo' || ctx.options.scenario === 'incident') {
    list.push({ name: 'old-dc', uuid: simRemoteUuid('old-dc'), hostname: 'old-dc.cbsim.local:8091', deleted: true, connectivityStatus: 'RC_ERROR' });
  }
  return list;
}

interface Shape {
  /** Total changes_left at simulated second s since start. */
  backlog(s: number): number;
  /** Replicated docs per second while running. */
  rate: number;
  paused: boolean;
  errors: string[];
  latencyMs: number;
  failedCheckpointsPerHour: number;
}

function shapeOf(ctx: SimContext, i: number, key: string): Shape {
  const r = (k: string): number => ctx.rand(`xdcr:${key}:${k}`);
  const base = 20 + Math.floor(200 * r('base'));
  const phase = 2 * Math.PI * r('phase');
  const shape: Shape = {
    backlog: (s) => base * (1 + 0.1 * Math.sin(phase + s / 300)),
    rate: 50 + Math.floor(450 * r('rate')),
    paused: false,
    errors: [],
    latencyMs: 5 + Math.floor(25 * r('latency')),
    failedCheckpointsPerHour: 0,
  };
  const scenario = ctx.options.scenario;
  if (scenario !== 'demo' && scenario !== 'incident') return shape;
  const incident = scenario === 'incident';
  const knob = ctx.options.knobs.xdcrGrowthPerSec;
  if (i === 0) {
    const start = incident ? 20_000 : 5_000;
    const growth = typeof knob === 'number' ? knob : incident ? 50 : 10;
    shape.backlog = (s) => start + growth * Math.max(0, s);
  } else if (i === 1) {
    const start = incident ? 200_000 : 50_000;
    const drain = incident ? 500 : 100;
    shape.backlog = (s) => Math.max(0, start - drain * Math.max(0, s));
  } else if (i === 2) {
    shape.paused = true;
    shape.backlog = () => 3_500;
  } else if (i === 3) {
    const day = new Date(ctx.startedAt).toISOString().slice(0, 10);
    shape.errors = [
      `${day} 09:14:02 Failed to repair connections to target cluster analytics-west: dial tcp 10.20.0.7:11210: i/o timeout`,
      `${day} 09:14:31 Error starting pipeline: failed to get the target bucket's vBucket map`,
    ];
    shape.latencyMs = 250;
    shape.failedCheckpointsPerHour = 12;
  }
  return shape;
}

function buildReplications(ctx: SimContext): SimReplication[] {
  const rems = remotes(ctx).filter((x) => !x.deleted);
  const buckets = ctx.buckets.map((b) => b.name);
  if (buckets.length === 0) return [];
  const n = Math.max(0, ctx.options.replications);
  const out: SimReplication[] = [];
  const ids = new Set<string>();
  for (let i = 0; i < n; i++) {
    const source = buckets[(i < 4 ? [0, 0, 1, 2][i] as number : i) % buckets.length] as string;
    const remote = rems[i % 2] as SimRemote;
    let target = i < 4 ? source : `${source}-${String(i).padStart(3, '0')}`;
    if (ids.has(`${remote.uuid}/${source}/${target}`)) target = `${source}-${String(i).padStart(3, '0')}`;
    const id = `${remote.uuid}/${source}/${target}`;
    ids.add(id);
    const shape = shapeOf(ctx, i, id);
    const sec = (t: number): number => (t - ctx.startedAt) / 1000;
    const total = (t: number): number => shape.backlog(sec(t));
    const rate = shape.paused ? 0 : shape.rate;
    const wob = (t: number, k: number): number => 1 + 0.05 * Math.sin(t / 7000 + k);
    const changesLeft = (node: string, t: number): number => Math.round(total(t) * nodeShare(ctx, node));
    // Documents written since start: the paused one stopped at start, the others at their rate.
    const written = (t: number): number => Math.round((10_000 + rate * Math.max(0, sec(t))) * wob(0, 0));
    const stat = (name: string, node: string, t: number): number | undefined => {
      // goxdcr's rates are what its counters gained in the last second, so a rate averaged over a window is
      // the counter's increase over it (7.x: rate(xdcr_docs_written_total) and so on).
      const perSecond = (counter: string): number => (stat(counter, node, t) ?? 0) - (stat(counter, node, t - 1000) ?? 0);
      const w = nodeShare(ctx, node);
      if (w === 0 || !STAT_SET.has(name)) return undefined;
      const docsWritten = Math.round(written(t) * w);
      const queue = shape.paused ? 0 : Math.round(Math.min(total(t), 2_000) * w * wob(t, 1));
      switch (name) {
        case 'changes_left':
          return changesLeft(node, t);
        case 'docs_written':
          return docsWritten;
        case 'docs_processed':
          return Math.round(docsWritten * 1.05);
        case 'docs_checked':
          return Math.round(docsWritten * 1.2);
        case 'docs_received_from_dcp':
          return Math.round(docsWritten * 1.05) + queue;
        case 'docs_opt_repd':
          return Math.round(docsWritten * 0.6);
        case 'docs_failed_cr_source':
          return Math.round(docsWritten * 0.01);
        case 'docs_filtered':
          return 0;
        case 'data_replicated':
          return docsWritten * AVG_DOC_BYTES;
        case 'docs_rep_queue':
          return queue;
        case 'size_rep_queue':
          return queue * AVG_DOC_BYTES;
        case 'rate_replicated':
          return perSecond('docs_written');
        case 'rate_received_from_dcp':
          return perSecond('docs_received_from_dcp');
        case 'bandwidth_usage':
          return perSecond('data_replicated');
        case 'meta_latency_wt':
          return Math.round(rate * w * 0.4 * wob(t, 4));
        case 'num_checkpoints':
          return Math.floor(Math.max(0, sec(t)) / 600) + 1;
        case 'num_failedckpts':
          return Math.floor((Math.max(0, sec(t)) / 3600) * shape.failedCheckpointsPerHour);
        // goxdcr clears latencies and the checkpoint time of a paused replication.
        case 'time_committing':
          return shape.paused ? 0 : Math.round(20 + 40 * ((wob(t, 5) - 0.95) * 10));
        case 'wtavg_docs_latency':
          return shape.paused ? 0 : Math.round(shape.latencyMs * wob(t, 6));
        case 'wtavg_meta_latency':
          return shape.paused ? 0 : Math.round((shape.latencyMs / 3) * wob(t, 7));
        default:
          return undefined;
      }
    };
    out.push({ id, remote, source, target, paused: shape.paused, errors: shape.errors, changesLeft, stat });
  }
  return out;
}

/** The replications the simulator serves (built once per simulator). */
export function xdcrSimReplications(ctx: SimContext): SimReplication[] {
  return ctx.area('xdcr.replications', () => buildReplications(ctx));
}

export function xdcrSimRemotes(ctx: SimContext): SimRemote[] {
  return ctx.area('xdcr.remotes', () => remotes(ctx));
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('text/plain').send('Requested resource not found.\r\n');
}

function taskEntry(ctx: SimContext, rep: SimReplication, template: Record<string, unknown>): Record<string, unknown> {
  const now = ctx.now();
  const nodes = kvNodes(ctx).map((n) => n.hostname);
  const sum = (name: string): number => nodes.reduce((a, n) => a + (rep.stat(name, n, now) ?? 0), 0);
  const enc = encodeURIComponent(rep.id);
  return {
    ...template,
    cancelURI: `/controller/cancelXDCR/${enc}`,
    settingsURI: `/settings/replications/${enc}`,
    status: rep.paused ? 'paused' : 'running',
    id: rep.id,
    pauseRequested: rep.paused,
    source: rep.source,
    target: `/remoteClusters/${rep.remote.uuid}/buckets/${rep.target}`,
    type: 'xdcr',
    changesLeft: sum('changes_left'),
    docsChecked: sum('docs_checked'),
    docsWritten: sum('docs_written'),
    errors: [...rep.errors],
  };
}

export const xdcrModule: SimModule = (app, ctx) => {
  const template = (): Record<string, unknown> => {
    const list = fixture<Array<Record<string, unknown>>>('pools-default-tasks/docs-server-7.1plus-xdcr.json');
    return list.find((t) => t.type === 'xdcr') ?? {};
  };
  addTaskProvider(ctx, () => {
    const t = template();
    return xdcrSimReplications(ctx).map((r) => taskEntry(ctx, r, t));
  });

  app.get('/pools/default/remoteClusters', async () => {
    const t = fixture<Array<Record<string, unknown>>>('pools-default-remoteClusters/docs-server-7.1plus-2refs.json')[0] ?? {};
    return xdcrSimRemotes(ctx).map((r) => ({
      ...t,
      connectivityStatus: r.connectivityStatus,
      deleted: r.deleted,
      hostname: r.hostname,
      name: r.name,
      uri: `/pools/default/remoteClusters/${encodeURIComponent(r.name)}`,
      uuid: r.uuid,
      validateURI: `/pools/default/remoteClusters/${encodeURIComponent(r.name)}?just_validate=1`,
    }));
  });

  // A wildcard, not `:endpoint`: fastify caps a named parameter at 100 characters, and an endpoint with two
  // bucket names (up to 100 characters each) is longer. The raw path is checked to hold ONE encoded segment
  // after /stats/, as Couchbase requires, so a client that forgets to encode the slashes gets a 404 here too.
  app.get<{ Params: { bucket: string; '*': string }; Querystring: SampleQuery }>('/pools/default/buckets/:bucket/stats/*', async (req, reply) => {
    const bucket = req.params.bucket;
    const endpoint = req.params['*'];
    const rawPath = req.url.split('?')[0] ?? '';
    if (rawPath.slice(rawPath.indexOf('/stats/') + '/stats/'.length).includes('/')) return notFound(reply);
    if (!ctx.buckets.some((b) => b.name === bucket)) return notFound(reply);
    const parts = endpoint.split('/');
    if (parts.length !== 5 || parts[0] !== 'replications' || parts[2] !== bucket) return notFound(reply);
    const id = parts.slice(1, 4).join('/');
    const stat = parts[4] as string;
    const rep = xdcrSimReplications(ctx).find((r) => r.id === id);
    if (!rep || !STAT_SET.has(stat)) return notFound(reply);
    const { zoom, stamps: timestamp, skew, newest } = sampleTimes(ctx, req.query);
    const nodeStats: Record<string, number[]> = {};
    // A node whose clock is `skew` ahead stamps the value of real time t - skew as t.
    const override = (ctx.options.knobs.xdcrStatValues as Readonly<Record<string, (t: number, node: string) => number>> | undefined)?.[stat];
    // ns_server gathers a replication's stat from the bucket's servers that answer (live_bucket_nodes): a node
    // that is down is absent from nodeStats, a failed-over one is no longer a server.
    await gatherDelay(ctx, liveBucketNodes(ctx));
    // 7.0+ answers the legacy name from goxdcr's native series (stat_names_mappings.erl, the `@xdcr-` replications
    // clause): a name with no native series there (meta_latency_wt on every 7.x line; docs_rep_queue once 8.0's
    // goxdcr no longer exports xdcr_docs_rep_queue_total) has no node's samples.
    const profile = ctx.options.profile;
    const unanswered = profile.rangeApi && (stat === 'meta_latency_wt' || (stat === 'docs_rep_queue' && profile.major >= 8));
    for (const n of unanswered ? [] : liveBucketNodes(ctx)) nodeStats[n.hostname] = timestamp.map((t) => (override ? override(t - skew, n.hostname) : (rep.stat(stat, n.hostname, t - skew) ?? 0)));
    return { samplesCount: zoom.count, isPersistent: true, lastTStamp: newest, interval: zoom.stepMs, timestamp, nodeStats };
  });

  app.get<{ Params: { id: string } }>('/settings/replications/:id', async (req, reply) => {
    const rep = xdcrSimReplications(ctx).find((r) => r.id === req.params.id);
    if (!rep) return notFound(reply);
    return { ...fixture<Record<string, unknown>>('settings-replications-id/docs-server-7.1plus.json'), pauseRequested: rep.paused };
  });
};

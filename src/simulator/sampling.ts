/**
 * Couchbase's sampled statistics as the simulator serves them (bucket stats and XDCR per-stat envelopes):
 * the zoom table of the REST reference, `haveTStamp`, and the knobs that make the sampling misbehave the
 * way real clusters do. The simulator keeps its own copy of the table: it never reads the collectors' code.
 *
 * Knobs (SimOptions.knobs, read at every request, so a test may change them between polls):
 * - `statsClockSkewMs: number[]`: the cluster URL is a load balancer; each stats request is answered by the
 *   next node in turn, whose clock is off by this many ms. A sample stamped t on a node with skew s holds the
 *   value of real time t - s, as a real node's would. One negative entry = the node's clock stepped back.
 * - `statsStalledAt: number` (epoch ms): the server's stats collector stopped then; no newer sample exists.
 */
import type { SimContext } from './types.js';

export interface SimZoom {
  readonly stepMs: number;
  readonly count: number;
}

/** Sampling per zoom, from the REST reference's table. */
export const SIM_ZOOMS: Readonly<Record<string, SimZoom>> = {
  minute: { stepMs: 1_000, count: 60 },
  hour: { stepMs: 4_000, count: 900 },
  day: { stepMs: 60_000, count: 1_440 },
  week: { stepMs: 600_000, count: 1_152 },
  month: { stepMs: 1_800_000, count: 1_488 },
  year: { stepMs: 21_600_000, count: 1_464 },
};

export interface SampleQuery {
  zoom?: string;
  haveTStamp?: string;
}

export interface SampleTimes {
  readonly zoomName: string;
  readonly zoom: SimZoom;
  /** Sample timestamps on the answering node's clock, oldest first. */
  readonly stamps: number[];
  /** The answering node's clock offset: the value of stamp t is the model's value at t - skew. */
  readonly skew: number;
  /** The newest sample the node has (whether or not haveTStamp let it through). */
  readonly newest: number;
  readonly have: number | undefined;
}

/** Which samples one stats answer carries, per zoom, haveTStamp and the knobs. */
export function sampleTimes(ctx: SimContext, q: SampleQuery): SampleTimes {
  const zoomName = q.zoom !== undefined && q.zoom in SIM_ZOOMS ? q.zoom : 'minute';
  const zoom = SIM_ZOOMS[zoomName] as SimZoom;
  const skews = ctx.options.knobs.statsClockSkewMs;
  let skew = 0;
  if (Array.isArray(skews) && skews.length > 0) {
    const turn = ctx.area('sampling.turn', () => ({ n: 0 }));
    const s: unknown = skews[turn.n++ % skews.length];
    skew = typeof s === 'number' ? s : 0;
  }
  let now = ctx.now() + skew;
  const stalled = ctx.options.knobs.statsStalledAt;
  if (typeof stalled === 'number') now = Math.min(now, stalled + skew);
  const newest = Math.floor(now / zoom.stepMs) * zoom.stepMs;
  const have = q.haveTStamp === undefined || !Number.isFinite(Number(q.haveTStamp)) ? undefined : Number(q.haveTStamp);
  const stamps: number[] = [];
  for (let i = zoom.count - 1; i >= 0; i--) {
    const t = newest - i * zoom.stepMs;
    if (have === undefined || t > have) stamps.push(t);
  }
  return { zoomName, zoom, stamps, skew, newest, have };
}

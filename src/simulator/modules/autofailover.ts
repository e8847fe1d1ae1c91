/**
 * GET /settings/autoFailover and POST /settings/autoFailover/resetCount, in the 7.1+ shape
 * (settings-autofailover/docs-server-7.1plus.json).
 *
 * Scenarios (simulated time, see `speed`):
 * - `default`: enabled, timeout 120 s, count 0, maxCount 1, no server-group failover.
 * - `demo`: one auto-failover already used: count 1 of maxCount 3, server-group failover on (3 groups).
 * - `incident` (and `failover`): count starts at 0 and grows by one every `autofailoverIntervalSeconds`
 *   (default 120 s) until it equals maxCount 2 — no automatic protection left.
 * Knobs: `autofailoverCount` (fixed count), `autofailoverMaxCount`, `autofailoverIntervalSeconds` (makes the
 * count grow in any scenario), `autofailoverEnabled`.
 * The count stays until POST /settings/autoFailover/resetCount, as on a real cluster. The cluster module reads
 * `failoversSoFar()` to mark that many nodes inactiveFailed.
 */
import type { SimContext, SimModule } from '../types.js';

interface AfoState {
  /** Simulated time of the last resetCount, or undefined. */
  resetAt: number | undefined;
}

function state(ctx: SimContext): AfoState {
  return ctx.area<AfoState>('autofailover', () => ({ resetAt: undefined }));
}

function knobNumber(ctx: SimContext, name: string): number | undefined {
  const v = ctx.options.knobs[name];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function autofailoverMaxCount(ctx: SimContext): number {
  const k = knobNumber(ctx, 'autofailoverMaxCount');
  if (k !== undefined) return k;
  const s = ctx.options.scenario;
  return s === 'demo' ? 3 : s === 'incident' || s === 'failover' ? 2 : 1;
}

function rampInterval(ctx: SimContext): number | undefined {
  const k = knobNumber(ctx, 'autofailoverIntervalSeconds');
  if (k !== undefined && k > 0) return k;
  const s = ctx.options.scenario;
  return s === 'incident' || s === 'failover' ? 120 : undefined;
}

/** Automatic failovers since `resetAt` (simulated ms; undefined = since start), capped at maxCount. */
function failoversSince(ctx: SimContext, resetAt: number | undefined): number {
  const max = autofailoverMaxCount(ctx);
  const fixed = knobNumber(ctx, 'autofailoverCount');
  if (fixed !== undefined) return resetAt === undefined ? fixed : 0;
  const every = rampInterval(ctx);
  if (every !== undefined) {
    const steps = (t: number): number => Math.floor(Math.max(0, t - ctx.startedAt) / 1000 / every);
    return Math.min(max, Math.max(0, steps(ctx.now()) - steps(resetAt ?? ctx.startedAt)));
  }
  if (resetAt !== undefined) return 0;
  return ctx.options.scenario === 'demo' ? 1 : 0;
}

/** Automatic failovers since the simulator started (a reset of the counter does not bring nodes back). */
export function failoversSoFar(ctx: SimContext): number {
  return failoversSince(ctx, undefined);
}

export function autofailoverCount(ctx: SimContext): number {
  return failoversSince(ctx, state(ctx).resetAt);
}

export const autofailoverModule: SimModule = (app, ctx) => {
  app.get('/settings/autoFailover', async () => {
    const s = ctx.options.scenario;
    const enabledKnob = ctx.options.knobs.autofailoverEnabled;
    return {
      enabled: typeof enabledKnob === 'boolean' ? enabledKnob : true,
      timeout: s === 'default' ? 120 : 60,
      count: autofailoverCount(ctx),
      failoverOnDataDiskIssues: { enabled: s !== 'default', timePeriod: 120 },
      failoverServerGroup: s !== 'default',
      maxCount: autofailoverMaxCount(ctx),
      canAbortRebalance: true,
    };
  });

  app.post('/settings/autoFailover/resetCount', async (req, reply) => {
    if (ctx.userOf(req) !== 'admin') {
      return reply.code(403).send({ message: 'Forbidden. User needs the following permissions', permissions: ['cluster.settings!write'] });
    }
    state(ctx).resetAt = ctx.now();
    return reply.code(200).send('');
  });
};

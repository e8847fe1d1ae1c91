/**
 * GET /pools/default/tasks. Several areas contribute entries (rebalance, compaction, XDCR): each registers a
 * provider with `addTaskProvider`; the list is their concatenation, in registration order.
 */
import type { SimContext, SimModule } from '../types.js';

type Provider = () => unknown[];

function providers(ctx: SimContext): Provider[] {
  return ctx.area<Provider[]>('tasks.providers', () => []);
}

export function addTaskProvider(ctx: SimContext, p: Provider): void {
  providers(ctx).push(p);
}

export const tasksModule: SimModule = (app, ctx) => {
  app.get('/pools/default/tasks', async () => {
    const out: unknown[] = [];
    for (const p of providers(ctx)) out.push(...p());
    // A cluster with nothing running still lists the rebalance task (status notRunning).
    if (!out.some((t) => (t as { type?: string }).type === 'rebalance')) {
      out.unshift({ statusId: 'cbsim-none', type: 'rebalance', status: 'notRunning', statusIsStale: false, masterRequestTimedOut: false });
    }
    return out;
  });
};

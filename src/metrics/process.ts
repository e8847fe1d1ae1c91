/**
 * Process and Node.js runtime metrics from prom-client's defaults, minus the `nodejs_active_*_total`
 * gauges: their names end in `_total` without being counters, which `promtool check metrics` rejects.
 */
import client from 'prom-client';

export const processRegistry = new client.Registry();
let started = false;

const NOT_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export function startProcessMetrics(): void {
  if (started) return;
  started = true;
  client.collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: 20 });
  for (const name of NOT_COUNTERS) processRegistry.removeSingleMetric(name);
}

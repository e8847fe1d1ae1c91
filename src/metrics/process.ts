/**
 * Process and Node.js runtime metrics from prom-client's defaults, minus the `nodejs_active_*_total`
 * gauges: their names end in `_total` without being counters, which `promtool check metrics` rejects.
 */
import client from 'prom-client';

export const processRegistry = new client.Registry();
let started = false;

const NOT_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * How often Node's event-loop delay monitor wakes the HTTP thread to take a sample (the `nodejs_eventloop_lag_*`
 * summaries; `nodejs_eventloop_lag_seconds` is measured at each scrape and does not depend on it). Every sample is a
 * timer firing, and a fine resolution made the monitor the largest part of an idle HTTP thread's CPU between scrapes
 * (bench/RESULTS.md measures it). A stall of the HTTP thread still shows: the sample that spans it is as late as the
 * stall.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

export function startProcessMetrics(): void {
  if (started) return;
  started = true;
  client.collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  for (const name of NOT_COUNTERS) processRegistry.removeSingleMetric(name);
}

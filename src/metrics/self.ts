/**
 * The exporter's own metrics. Per-collector status families are derived from the collector statuses at render
 * time. Webhook counters are live prom-client metrics in `selfRegistry` (on the thread that serves HTTP);
 * the Couchbase request counter and histogram live in src/metrics/requests.ts, on the thread that polls (the
 * collection worker), which renders them as a part of its own without prom-client. No family is written by
 * both threads.
 */
import client from 'prom-client';
import { LOG_DROP_REASONS, onLogDrop } from '../log.js';
import { resetRequestMetrics } from './requests.js';
import { SELF } from './self-families.js';

export { SELF, SELF_FAMILIES } from './self-families.js';
export { codeLabel, observeRequest, requestMetricsVersion } from './requests.js';

export const selfRegistry = new client.Registry();

/**
 * Requests this exporter answered: counted on the HTTP thread, rendered by the exposition at most once a second
 * (with the process metrics), so that counting a scrape does not make the next scrape render and join its body anew.
 */
export const servedRegistry = new client.Registry();

/** Bumped on every change of a live self-metric, so the renderer can memoise their text. */
let liveVersion = 0;
export function liveSelfVersion(): number {
  return liveVersion;
}
export function touchSelf(): void {
  liveVersion++;
}

const reloadSuccessful = new client.Gauge({ name: SELF.reloadSuccessful.name, help: SELF.reloadSuccessful.help, registers: [selfRegistry] });
const reloadSuccessTime = new client.Gauge({ name: SELF.reloadSuccessTime.name, help: SELF.reloadSuccessTime.help, registers: [selfRegistry] });

const reloadFailures = new client.Counter({ name: SELF.reloadFailures.name, help: SELF.reloadFailures.help, registers: [selfRegistry] });
const slowReaders = new client.Counter({ name: SELF.slowReaders.name, help: SELF.slowReaders.help, registers: [selfRegistry] });
/** Counters present from the start (0), so that increase() sees the first one. */
function seedCounters(): void {
  reloadFailures.inc(0);
  slowReaders.inc(0);
}
seedCounters();

/** Count a scrape whose connection was closed at its write deadline (src/server/app.ts). */
export function countSlowReader(): void {
  slowReaders.inc();
  touchSelf();
}

const logLinesDropped = new client.Counter({ name: SELF.logLinesDropped.name, help: SELF.logLinesDropped.help, labelNames: ['reason'] as const, registers: [selfRegistry] });
/** Every reason from the start (0), so that increase() sees the first drop. */
function seedLogDrops(): void {
  for (const reason of LOG_DROP_REASONS) logLinesDropped.inc({ reason }, 0);
}
seedLogDrops();
onLogDrop((reason) => {
  logLinesDropped.inc({ reason });
  touchSelf();
});

const httpServed = new client.Counter({
  name: SELF.httpServed.name,
  help: SELF.httpServed.help,
  labelNames: ['handler', 'code'] as const,
  registers: [servedRegistry],
});

let servedVersion = 0;
/** Changes whenever a request is counted in `servedRegistry`. */
export function servedMetricsVersion(): number {
  return servedVersion;
}

/** Count one answered request: `handler` is the route template (never a raw path), `code` the status sent. */
export function countServed(handler: string, code: number): void {
  httpServed.inc({ handler, code: String(code) });
  servedVersion++;
}

/** Record the outcome of loading the configuration (at start: success) on the HTTP thread's live metrics. */
export function recordConfigLoad(ok: boolean, now = Date.now()): void {
  reloadSuccessful.set(ok ? 1 : 0);
  if (ok) reloadSuccessTime.set(Math.floor(now / 1000));
  else reloadFailures.inc();
  touchSelf();
}

/** Forget every live series of a cluster (tests, reloads). */
export function resetSelf(): void {
  selfRegistry.resetMetrics();
  seedLogDrops();
  seedCounters();
  resetRequestMetrics();
  servedRegistry.resetMetrics();
  servedVersion++;
  touchSelf();
}

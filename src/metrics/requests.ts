/**
 * Requests to Couchbase: `cbwatch_couchbase_requests_total` and `cbwatch_couchbase_request_duration_seconds`,
 * counted where the clients run (the collection worker, or the process inline) and written as exposition text
 * here, without prom-client (the worker does not load it). The text is prom-client's for the
 * same observations (test/metrics/requests.test.ts checks it byte for byte against a prom-client Counter and
 * Histogram): HELP and TYPE, then each series in the order it was first seen, the histogram's `le` first.
 */
import type { RequestRecord } from '../couchbase/client.js';
import { SELF } from './self-families.js';

/** The histogram's upper bounds, seconds. */
export const REQUEST_DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const escapeHelp = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabel = (s: string): string => escapeHelp(s).replace(/"/g, '\\"');
const num = (v: number): string => (Number.isNaN(v) ? 'Nan' : Number.isFinite(v) ? `${v}` : v < 0 ? '-Inf' : '+Inf');

interface Histo {
  readonly labels: string;
  readonly counts: number[];
  sum: number;
  count: number;
}

/** Series key (label text) → value, in first-seen order. */
const counters = new Map<string, number>();
const histograms = new Map<string, Histo>();

/** Bumped on every request observed, so the request part is re-rendered only when it changed. */
let requestVersion = 0;
export function requestMetricsVersion(): number {
  return requestVersion;
}

/** Status codes Couchbase's services answer with, kept as they are in the `code` label. */
const USUAL_CODES = new Set([200, 201, 202, 204, 301, 302, 304, 307, 308, 400, 401, 403, 404, 405, 408, 409, 413, 429, 500, 501, 502, 503, 504]);

/**
 * The `code` label of a request: a usual status as it is, any other status as its class (`2xx`, `4xx`…, or
 * `other` outside 100-599), failures by name. The status comes from upstream (any three digits parse): without
 * this a broken server or proxy could add a series per endpoint for every code it invents.
 */
export function codeLabel(code: string): string {
  if (!/^\d+$/.test(code)) return code;
  const n = Number(code);
  if (USUAL_CODES.has(n)) return code;
  return n >= 100 && n <= 599 ? `${code.charAt(0)}xx` : 'other';
}

/** The client's `observe` hook. */
export function observeRequest(cluster: string, rec: RequestRecord): void {
  const series = `couchbase_cluster="${escapeLabel(cluster)}",endpoint="${escapeLabel(rec.endpoint)}"`;
  const withCode = `${series},code="${escapeLabel(codeLabel(rec.code))}"`;
  counters.set(withCode, (counters.get(withCode) ?? 0) + 1);
  let h = histograms.get(series);
  if (h === undefined) {
    h = { labels: series, counts: REQUEST_DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 };
    histograms.set(series, h);
  }
  const v = rec.durationSeconds;
  const i = REQUEST_DURATION_BUCKETS.findIndex((b) => v <= b);
  if (i >= 0) h.counts[i]! += 1;
  h.sum += v;
  h.count += 1;
  requestVersion++;
}

/** The two families' exposition text (counter first), each line ending in a newline. */
export function requestMetricsText(): string {
  const c = SELF.couchbaseRequests;
  const d = SELF.couchbaseDuration;
  let out = `# HELP ${c.name} ${escapeHelp(c.help)}\n# TYPE ${c.name} counter\n`;
  for (const [labels, value] of counters) out += `${c.name}{${labels}} ${num(value)}\n`;
  out += `# HELP ${d.name} ${escapeHelp(d.help)}\n# TYPE ${d.name} histogram\n`;
  for (const h of histograms.values()) {
    let acc = 0;
    REQUEST_DURATION_BUCKETS.forEach((bound, i) => {
      acc += h.counts[i]!;
      out += `${d.name}_bucket{le="${bound}",${h.labels}} ${acc}\n`;
    });
    out += `${d.name}_bucket{le="+Inf",${h.labels}} ${h.count}\n`;
    out += `${d.name}_sum{${h.labels}} ${num(h.sum)}\n${d.name}_count{${h.labels}} ${h.count}\n`;
  }
  return out;
}

/** Forget every series (tests, src/metrics/self.ts resetSelf). */
export function resetRequestMetrics(): void {
  counters.clear();
  histograms.clear();
  requestVersion++;
}

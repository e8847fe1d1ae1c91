/**
 * The Couchbase request metrics (src/metrics/requests.ts) write their own exposition text so that the collection
 * worker need not load prom-client. The oracle is prom-client itself: a Counter and a Histogram defined as the
 * code defined them before, fed the same observations, rendered through the same `tidy` as the worker's parts.
 */
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { tidy } from '../../src/metrics/part.js';
import type { RequestRecord } from '../../src/couchbase/client.js';
import { REQUEST_DURATION_BUCKETS, codeLabel, observeRequest, requestMetricsText, requestMetricsVersion, resetRequestMetrics } from '../../src/metrics/requests.js';
import { SELF } from '../../src/metrics/self-families.js';

function oracle(): { observe: (cluster: string, rec: RequestRecord) => void; text: () => Promise<string>; reset: () => void } {
  const registry = new client.Registry();
  const counter = new client.Counter({ name: SELF.couchbaseRequests.name, help: SELF.couchbaseRequests.help, labelNames: ['couchbase_cluster', 'endpoint', 'code'] as const, registers: [registry] });
  const histogram = new client.Histogram({
    name: SELF.couchbaseDuration.name,
    help: SELF.couchbaseDuration.help,
    labelNames: ['couchbase_cluster', 'endpoint'] as const,
    // Written out by hand (the values the metric has always had), not taken from the code under test.
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    observe: (cluster, rec) => {
      counter.inc({ couchbase_cluster: cluster, endpoint: rec.endpoint, code: codeLabel(rec.code) });
      histogram.observe({ couchbase_cluster: cluster, endpoint: rec.endpoint }, rec.durationSeconds);
    },
    text: async () => tidy(await registry.metrics()),
    reset: () => registry.resetMetrics(),
  };
}

const rec = (endpoint: string, code: string, durationSeconds: number): RequestRecord => ({ endpoint, method: 'GET', code, status: Number(code) || 0, durationSeconds, error: undefined });

const OBSERVATIONS: Array<[string, RequestRecord]> = [
  ['c1', rec('/pools/default', '200', 0.003)],
  ['c1', rec('/pools/default', '200', 0.005)],
  ['c1', rec('/pools/default', '200', 0.0051)],
  ['c1', rec('/pools/default/buckets/{bucket}/stats', '404', 0.2)],
  ['c2', rec('/pools/default', '503', 12.5)],
  ['c1', rec('/pools/default', 'timeout', 10)],
  ['c1', rec('/pools/default', '418', 1)],
  ['c1', rec('/pools/default', '999', 0.1 + 0.2)],
  ['we"ird\\clu\nster', rec('/end"point\\x\ny', 'network', 0.07)],
  ['c2', rec('/settings/stats', '200', 0)],
  ['c2', rec('/pools/default', '503', 2.5)],
];

describe('Couchbase request metrics: the text prom-client writes', () => {
  it('before any request: the two headers', async () => {
    resetRequestMetrics();
    const o = oracle();
    expect(requestMetricsText()).toBe(await o.text());
  });

  it('after each observation, byte for byte', async () => {
    resetRequestMetrics();
    const o = oracle();
    for (const [cluster, r] of OBSERVATIONS) {
      observeRequest(cluster, r);
      o.observe(cluster, r);
      expect(requestMetricsText()).toBe(await o.text());
    }
  });

  it('after a reset, and after observations that follow it', async () => {
    const o = oracle();
    resetRequestMetrics();
    for (const [cluster, r] of OBSERVATIONS) {
      observeRequest(cluster, r);
      o.observe(cluster, r);
    }
    const before = requestMetricsVersion();
    resetRequestMetrics();
    o.reset();
    expect(requestMetricsVersion()).not.toBe(before);
    expect(requestMetricsText()).toBe(await o.text());
    for (const [cluster, r] of OBSERVATIONS.slice(3)) {
      observeRequest(cluster, r);
      o.observe(cluster, r);
    }
    expect(requestMetricsText()).toBe(await o.text());
  });

  it('hand-written: one request of 0.3 s', () => {
    resetRequestMetrics();
    observeRequest('c', rec('/x', '200', 0.3));
    const lines = requestMetricsText().split('\n');
    expect(lines).toContain('cbwatch_couchbase_requests_total{couchbase_cluster="c",endpoint="/x",code="200"} 1');
    expect(lines).toContain('cbwatch_couchbase_request_duration_seconds_bucket{le="0.25",couchbase_cluster="c",endpoint="/x"} 0');
    expect(lines).toContain('cbwatch_couchbase_request_duration_seconds_bucket{le="0.5",couchbase_cluster="c",endpoint="/x"} 1');
    expect(lines).toContain('cbwatch_couchbase_request_duration_seconds_bucket{le="+Inf",couchbase_cluster="c",endpoint="/x"} 1');
    expect(lines).toContain('cbwatch_couchbase_request_duration_seconds_sum{couchbase_cluster="c",endpoint="/x"} 0.3');
    expect(lines).toContain('cbwatch_couchbase_request_duration_seconds_count{couchbase_cluster="c",endpoint="/x"} 1');
    expect(REQUEST_DURATION_BUCKETS).toHaveLength(11);
    resetRequestMetrics();
  });
});

import { describe, expect, it } from 'vitest';
import { metricNames, rawCounterRefs, substituteGrafanaVars, variableQueryExpr } from '../../src/tools/promql.js';

describe('metricNames', () => {
  it('finds selectors and skips functions, keywords, labels, strings and durations', () => {
    expect(
      metricNames('sum by (endpoint, code) (rate(cbwatch_couchbase_requests_total{code!~"2..", endpoint="x_total"}[5m])) / on(couchbase_cluster) group_left(node) couchbase_up offset 1h'),
    ).toEqual(['cbwatch_couchbase_requests_total', 'couchbase_up']);
    expect(metricNames('histogram_quantile(0.9, sum(rate(a_bucket[1h30m])) by (le))')).toEqual(['a_bucket']);
    expect(metricNames('count(x == 0) or vector(0)')).toEqual(['x']);
    expect(metricNames('topk(5, deriv(sum by (a) (b)[15m:1m]))')).toEqual(['b']);
    expect(metricNames('label_replace(m, "dst", "$1", "src", "(.*)")')).toEqual(['m']);
    expect(metricNames('up{job=~"cbwatch.*"} == 0 or absent(up{job=~"cbwatch.*"})')).toEqual(['up']);
    expect(metricNames('1e3 * x > bool 2')).toEqual(['x']);
  });
});

describe('rawCounterRefs', () => {
  const isCounter = (n: string) => n.endsWith('_total');
  it('accepts counters inside rate, increase and friends, at any depth', () => {
    expect(rawCounterRefs('sum(rate(a_total[5m]))', isCounter)).toEqual([]);
    expect(rawCounterRefs('increase(a_total{x="1"}[1h]) > 0', isCounter)).toEqual([]);
    expect(rawCounterRefs('sum by (x) (changes(a_total[1h]))', isCounter)).toEqual([]);
  });
  it('flags raw counters', () => {
    expect(rawCounterRefs('a_total > 5', isCounter)).toEqual(['a_total']);
    expect(rawCounterRefs('sum(a_total) > 5 and rate(b_total[5m]) > 0', isCounter)).toEqual(['a_total']);
    expect(rawCounterRefs('max_over_time(a_total[5m])', isCounter)).toEqual(['a_total']);
  });
});

describe('Grafana variables', () => {
  it('become durations or match-all regexes', () => {
    expect(substituteGrafanaVars('rate(x{a=~"$couchbase_cluster", b=~"${bucket:regex}"}[$__rate_interval])')).toBe('rate(x{a=~".*", b=~".*"}[5m])');
    expect(substituteGrafanaVars('increase(x[$__interval])')).toBe('increase(x[1m])');
    expect(substituteGrafanaVars('label_replace(x, "a", "$1", "b", "(.*)")')).toBe('label_replace(x, "a", "$1", "b", "(.*)")');
  });
  it('variable queries become selectors', () => {
    expect(variableQueryExpr('label_values(couchbase_bucket_info{couchbase_cluster=~"$couchbase_cluster"}, bucket)')).toBe('couchbase_bucket_info{couchbase_cluster=~"$couchbase_cluster"}');
    expect(variableQueryExpr('query_result(up)')).toBe('up');
  });
});

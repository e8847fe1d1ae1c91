import { describe, expect, it } from 'vitest';
import {
  FAULT_VARIANTS,
  MATRIX_MAX_RESPONSE_BYTES,
  ROUTE_OWNERS,
  buildMatrix,
  percentile,
  readCollectors,
  renderTable,
  replaceSection,
  routeKey,
  rssGrowth,
  seriesLostOutside,
  slope,
  sumSeries,
} from '../../bench/chaos-lib.js';
import { FAULT_KINDS, createSimulator } from '../../src/simulator/index.js';

describe('chaos harness: the matrix covers the simulator', () => {
  // The route list comes from the simulator's own route table, not from a copy.
  const routes = createSimulator().routes;

  it('has every fault kind × every route of the simulator', () => {
    expect(routes.length).toBeGreaterThan(20);
    const cells = buildMatrix(routes, FAULT_KINDS);
    for (const route of routes) {
      for (const kind of FAULT_KINDS) {
        expect(cells.some((c) => routeKey(c.route) === routeKey(route) && c.variant.kind === kind), `${routeKey(route)} × ${kind}`).toBe(true);
      }
    }
    const variants = Object.values(FAULT_VARIANTS).flat().length;
    expect(cells).toHaveLength(routes.length * variants);
  });

  it('names the requesting collectors of every route (a new simulator route needs a decision)', () => {
    for (const route of routes) expect(ROUTE_OWNERS, routeKey(route)).toHaveProperty([routeKey(route)]);
    // Hand-checked against DESIGN.md's collector table.
    expect(ROUTE_OWNERS['GET /pools/default/buckets/:bucket/stats']).toEqual(['bucket_stats']);
    expect(ROUTE_OWNERS['GET /settings/autoFailover']).toEqual(['autofailover']);
    expect(ROUTE_OWNERS['GET /pools/default/tasks']).toEqual(['tasks', 'xdcr']);
  });

  it('asks for 500, 503, 404 and an oversize answer above the matrix cap', () => {
    expect(FAULT_VARIANTS.status.map((v) => v.rule.status)).toEqual([500, 503, 404]);
    expect(FAULT_VARIANTS.oversize[0]?.rule.bytes).toBeGreaterThan(MATRIX_MAX_RESPONSE_BYTES);
  });
});

describe('chaos harness: pure helpers', () => {
  it('percentile is nearest-rank', () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(v, 99)).toBe(99);
    expect(percentile(v, 50)).toBe(50);
    expect(percentile(v, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([3, 1, 2], 0)).toBe(1);
    expect(percentile([], 99)).toBeNaN();
  });

  it('renders a Markdown table, escaping pipes', () => {
    expect(renderTable(['a', 'b'], [['1', 'x|y'], ['2']])).toBe('| a | b |\n|---|---|\n| 1 | x\\|y |\n| 2 |  |');
  });

  it('replaces only its own section, and is stable on re-run', () => {
    const doc = '# Benchmark results\n\nintro\n\n## Bucket stats\n\ntable\n\n## XDCR\n\nx\n';
    const once = replaceSection(doc, 'Chaos', 'first');
    expect(once).toBe(`${doc}\n## Chaos\n\nfirst\n`);
    const twice = replaceSection(once, 'Chaos', 'second');
    expect(twice).toBe(`${doc}\n## Chaos\n\nsecond\n`);
    const middle = replaceSection('# T\n\n## Chaos\n\nold\n\n## After\n\nkeep\n', 'Chaos', 'new');
    expect(middle).toBe('# T\n\n## Chaos\n\nnew\n\n## After\n\nkeep\n');
  });

  it('reads collector self-metrics and counter sums from an exposition', () => {
    const body = [
      '# TYPE cbwatch_collector_success gauge',
      'cbwatch_collector_success{couchbase_cluster="c",collector="nodes"} 1',
      'cbwatch_collector_success{couchbase_cluster="c",collector="xdcr"} 0',
      'cbwatch_collector_series{couchbase_cluster="c",collector="nodes"} 172',
      'cbwatch_collector_last_success_timestamp_seconds{couchbase_cluster="c",collector="nodes"} 1795447418.5',
      'cbwatch_couchbase_requests_total{couchbase_cluster="c",endpoint="/a",code="timeout"} 3',
      'cbwatch_couchbase_requests_total{couchbase_cluster="c",endpoint="/b",code="timeout"} 4',
      'cbwatch_couchbase_requests_total{couchbase_cluster="c",endpoint="/b",code="200"} 9',
    ].join('\n');
    const v = readCollectors(body);
    expect(v.success.get('nodes')).toBe(1);
    expect(v.success.get('xdcr')).toBe(0);
    expect(v.series.get('nodes')).toBe(172);
    expect(v.lastSuccess.get('nodes')).toBe(1795447418.5);
    expect(sumSeries(body, 'cbwatch_couchbase_requests_total', 'code="timeout"')).toBe(7);
  });

  it('counts series lost only outside the owners, never negative', () => {
    const base = new Map([['a', 10], ['b', 5], ['c', 3]]);
    const min = new Map([['a', 0], ['b', 2], ['c', 9]]);
    expect(seriesLostOutside(base, min, ['a'])).toBe(3);
    expect(seriesLostOutside(base, new Map(), [])).toBe(18);
  });

  it('slope is least squares', () => {
    expect(slope([[0, 100], [1, 102], [2, 104]])).toBeCloseTo(2);
    expect(slope([[0, 1]])).toBeNaN();
  });
});

describe('rssGrowth: the churn soak verdict', () => {
  /** `a→b, c→d` as printed under "RSS over time" in bench/RESULTS.md. */
  const curve = (text: string) => text.split(', ').map((p) => p.split('→').map(Number) as [number, number]);

  it('passes the flat sawtooth of the 300 s soak that the least-squares slope called rising (1.6 MB/min)', () => {
    const flat = curve(
      '0→146, 10→149, 20→138, 30→135, 40→139, 50→145, 60→147, 70→146, 80→148, 90→148, 100→149, 110→144, 120→144, 130→148, 140→139, 150→143, 160→146, 170→149, 180→149, 190→149, 200→149, 210→151, 220→149, 230→150, 240→150, 250→150, 260→150, 270→150, 280→152, 290→145, 300→147',
    );
    const g = rssGrowth(flat);
    expect(g.rising).toBe(false);
    expect(g.warmupS).toBe(60);
    expect(g.early).toEqual([60, 140]);
    expect(g.late).toEqual([220, 300]);
    // Hand-computed: medians of 147,146,148,148,149,144,144,148,139 and 149,150,150,150,150,150,152,145,147.
    expect(g.earlyMB).toBe(147);
    expect(g.lateMB).toBe(150);
    expect(g.text).toMatch(/147 MB .*150 MB .*\+3\.0 MB/);
  });

  it('fails the steady climb of the issue\'s before run (179 → 798 MB in 10 minutes), sawtooth or not', () => {
    const climb: Array<[number, number]> = [];
    for (let t = 0; t <= 600; t += 10) climb.push([t, 179 + ((798 - 179) * t) / 600 + (t % 30 === 0 ? -8 : 6)]);
    const g = rssGrowth(climb);
    expect(g.rising).toBe(true);
    expect(g.growthMB).toBeGreaterThan(300);
  });

  it('needs both thresholds: +15 MB on a 30 MB process, or +8% of a 500 MB one, is not rising', () => {
    const ramp = (from: number, to: number) => Array.from({ length: 31 }, (_, i) => [i * 10, from + ((to - from) * i) / 30] as [number, number]);
    expect(rssGrowth(ramp(30, 52)).rising).toBe(false);
    expect(rssGrowth(ramp(500, 560)).rising).toBe(false);
    expect(rssGrowth(ramp(500, 620)).rising).toBe(true);
  });

  it('does not judge a run too short to have three samples per third', () => {
    const g = rssGrowth([[0, 100], [10, 200], [20, 300]]);
    expect(g.rising).toBeUndefined();
    expect(g.text).toMatch(/too short/);
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectorList } from '../../src/collectors/index.js';
import { COLLECTOR_NAMES } from '../../src/config/schema.js';
import { allFamilies } from '../../src/catalog.js';
import { renderMetricsDoc } from '../../src/tools/metrics-doc.js';

const DOC = join(import.meta.dirname, '..', '..', 'docs', 'metrics.md');

describe('metric catalog', () => {
  it('registers every collector of the configuration schema', () => {
    expect(collectorList().map((c) => c.name).sort()).toEqual([...COLLECTOR_NAMES].sort());
  });

  it('has unique names that follow the conventions', () => {
    const fams = allFamilies();
    expect(new Set(fams.map((f) => f.name)).size).toBe(fams.length);
    for (const f of fams) {
      expect(f.name, f.name).toMatch(/^(couchbase|cbwatch)_[a-z0-9_]+$/);
      expect(f.help.length, `${f.name} needs a help text`).toBeGreaterThan(5);
      if (f.collector !== 'exporter' && f.collector !== 'webhooks') expect(f.name.startsWith('couchbase_'), f.name).toBe(true);
      if (f.name.endsWith('_info')) expect(f.type).toBe('gauge');
    }
  });

  it('every collector family is owned by its collector', () => {
    for (const c of collectorList()) for (const f of c.families) expect(f.collector, f.name).toBe(c.name);
  });
});

describe('docs/metrics.md', () => {
  it('is generated from the catalog (run `npm run generate` when this fails)', () => {
    expect(readFileSync(DOC, 'utf8')).toBe(renderMetricsDoc());
  });
});

describe('docs/metrics.md states the sampling, staleness and partial-failure rules', () => {
  it('has the section an operator reads before the tables', () => {
    const doc = readFileSync(DOC, 'utf8');
    const section = doc.slice(doc.indexOf('## How to read these numbers'), doc.indexOf('## exporter'));
    expect(section).toMatch(/finest zoom whose window covers the poll interval/);
    expect(section).toMatch(/mean of exactly the samples since the previous/);
    expect(section).toContain('couchbase_bucket_last_sample_timestamp_seconds');
    expect(section).toContain('cbwatch_collector_item_errors_total');
    expect(section).toContain('cbwatch_collector_dropped_values_total');
  });
});

describe('docs/metrics.md states where the service statistics come from and what they lack', () => {
  it('has a service subsection under "Statistics sources" naming both sources, the shares and the absences', () => {
    const doc = readFileSync(DOC, 'utf8');
    const from = doc.indexOf('### Service statistics');
    expect(from).toBeGreaterThan(doc.indexOf('## Statistics sources'));
    const section = doc.slice(from, doc.indexOf('\n## ', from));
    expect(section).toContain('POST /pools/default/stats/range');
    expect(section).toContain('GET /pools/default/buckets/@<section>/nodes/<host:port>/stats');
    expect(section).toContain('`@eventing`');
    expect(section).toMatch(/one node's share of an index/);
    expect(section).toMatch(/sum by \(couchbase_cluster, bucket, scope, collection, index\)/);
    expect(section).toMatch(/per-process statistics \(`couchbase_process_\*`\) before 7\.0/);
    expect(section).toContain('couchbase_query_timeouts_per_second');
    expect(section).toMatch(/`couchbase_node_disk_usage_ratio`\) before 7\.6/);
    expect(section).toMatch(/paused or undeployed function/);
    expect(section).toMatch(/they are `_default`/);
    expect(section).toMatch(/sees no new point/);
  });
});

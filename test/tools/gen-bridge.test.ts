/**
 * The native-metrics bridge generator (src/tools/gen-bridge.ts): every native series it reads is one Couchbase's
 * 8.0 metadata names (with that type); every family the shipped dashboards and alerts read from `bucket_stats` or
 * the stats part of `xdcr` is recorded, with cbwatch's label set; the mixin gives the same rules; the example
 * Prometheus configuration passes `promtool check config`; the cbwatch configuration it documents is accepted.
 * The bridge's values: alerts/tests/native/bridge.test.yml (promtool, hand-computed), the cache-miss ratio by server
 * line: bridge-cache-miss.test.yml, and two alerts on bridged series: alerts/tests/native/alerts.test.yml, all run here. They sit in a folder of their own because the tests
 * of alerts/tests/*.test.yml are re-run against templated alert rules, which do not hold the bridge.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/config/flags.js';
import { loadConfig } from '../../src/config/load.js';
import { allFamilies } from '../../src/catalog.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { KV_ROW_BY_LEGACY, XDCR_ROW_BY_LEGACY } from '../../src/stats/native-map.js';
import { F as EVENTING_STATUS_FAMILIES } from '../../src/collectors/eventing.js';
import { INDEX_STATE_FAMILIES } from '../../src/collectors/index-state.js';
import { BRIDGED_KV, BRIDGED_XDCR, BRIDGE_GROUPS, CBWATCH_NATIVE_CONFIG, bridgedServiceFamilies, VERSIONS_BEFORE_768, VERSIONS_FROM_768, XDCR_RULES, bridgedFamilies, examplePrometheusConfig, renderBridge, xdcrStatFamilies } from '../../src/tools/gen-bridge.js';
import { requireBinary } from '../helpers/tools.js';

const NATIVE = join(PACKAGE_ROOT, 'test', 'fixtures', 'couchbase', 'native');
type Meta = Record<string, { type: string; labels?: string[]; unit?: string }>;
const metadata: Record<string, Meta> = Object.fromEntries(
  ['kv', 'goxdcr', 'n1ql', 'index', 'fts', 'eventing', 'cm'].map((s) => [s, JSON.parse(readFileSync(join(NATIVE, `8.0-${s}_metrics_metadata.json`), 'utf8')) as Meta]),
);
/**
 * Analytics has no metadata file among Couchbase's 8.0 ones: its native names and types as ns_server maps the `@cbas`
 * stats to them (ns_server@7.6.2:src/stat_names_mappings.erl, the cbas_* renames): gauges heap, disk, threads and
 * load; counters (`_total`) gc count, gc time in ms, I/O reads and writes.
 */
metadata.cbas = {
  cbas_heap_memory_used_bytes: { type: 'gauge' },
  cbas_disk_used_bytes_total: { type: 'gauge' },
  cbas_thread_count: { type: 'gauge' },
  cbas_system_load_average: { type: 'gauge' },
  cbas_gc_count_total: { type: 'counter' },
  cbas_gc_time_milliseconds_total: { type: 'counter' },
  cbas_io_reads_total: { type: 'counter' },
  cbas_io_writes_total: { type: 'counter' },
};
const crossReference = readFileSync(join(NATIVE, 'xdcr_cross_reference.csv'), 'utf8');
const rules = BRIDGE_GROUPS.flatMap((g) => g.rules);

/** Metric names a PromQL expression selects: identifiers left once strings, label lists and function calls are out. */
function selected(expr: string): string[] {
  const bare = expr
    .replace(/"[^"]*"/g, '""')
    .replace(/\b(by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
  return [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)].map((m) => m[1] as string).filter((n) => !/^(or|and|unless)$/.test(n));
}

/** Every couchbase_* family a shipped dashboard query or alert expression names. */
function usedFamilies(): Set<string> {
  const texts: string[] = [];
  for (const f of readdirSync(join(PACKAGE_ROOT, 'dashboards')).filter((x) => x.endsWith('.json'))) texts.push(readFileSync(join(PACKAGE_ROOT, 'dashboards', f), 'utf8'));
  texts.push(readFileSync(join(PACKAGE_ROOT, 'alerts', 'cbwatch.rules.yml'), 'utf8'));
  const out = new Set<string>();
  for (const t of texts) for (const m of t.matchAll(/\bcouchbase_[a-z0-9_]+\b/g)) out.add(m[0]);
  return out;
}

describe('native-metrics bridge: facts', () => {
  it('reads only the mapping table\'s native series, named in the 8.0 metadata files with the type the table gives', () => {
    expect(selected(rules.find((r) => r.record === 'couchbase_bucket_node_ops_per_second')?.expr ?? '')).toEqual(['kv_cmd_lookup', 'kv_ops']);
    expect(selected(rules.find((r) => r.record === 'couchbase_xdcr_changes_left')?.expr ?? '')).toEqual(['couchbase_native:xdcr_changes_left:main', 'couchbase_xdcr_remote_cluster_info', 'couchbase_native:xdcr_changes_left:main']);
    const recorded = new Set(rules.map((r) => r.record));
    let checked = 0;
    for (const r of rules) {
      const table = [...(r.row?.series ?? []), ...(r.row?.denominator ?? []), ...(r.from768?.series ?? []), ...(r.from768?.denominator ?? [])];
      for (const name of selected(r.expr)) {
        if (recorded.has(name) || name === 'couchbase_xdcr_remote_cluster_info') continue;
        if (r.service !== undefined) {
          // A service rule: the series it lists, each in its service's 8.0 metadata with that type.
          const x = r.service.natives.find((t) => t.metric === name);
          expect(x, `${r.record} reads ${name}, which it does not list`).toBeDefined();
          expect(metadata[x?.service ?? '']?.[name]?.type, `${r.record}: ${name}`).toBe(x?.type);
          checked++;
          continue;
        }
        // The node versions, from cbwatch's nodes collector, for the rules that say they need them.
        if (name === 'couchbase_node_info' && r.needsCbwatch === true) continue;
        const x = table.find((t) => t.metric === name);
        expect(x, `${r.record} reads ${name}, which its table row does not list`).toBeDefined();
        const service = name.startsWith('xdcr_') ? 'goxdcr' : 'kv';
        if (r.row?.absentIn80) {
          expect(metadata[service]?.[name], name).toBeUndefined();
          expect(crossReference, name).toContain(`,${name}`);
        } else {
          expect(metadata[service]?.[name]?.type, name).toBe(x?.type);
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(90);
  });

  it('XDCR rules keep only the main pipeline, from series labelled as the metadata says', () => {
    for (const r of XDCR_RULES.filter((x) => x.row)) {
      expect(r.expr).toContain('pipelineType="Main"');
      for (const x of r.row?.series ?? []) if (!r.row?.absentIn80) expect(metadata.goxdcr?.[x.metric]?.labels).toEqual(['sourceBucketName', 'targetClusterUUID', 'targetBucketName', 'pipelineType']);
    }
  });

  it('kv_ops is selected by its `op` label, the one label the metadata lists for it', () => {
    expect(metadata.kv?.kv_ops?.labels).toEqual(['op']);
    let n = 0;
    for (const r of rules) for (const m of r.expr.matchAll(/kv_ops\{([^}]*)\}/g)) (expect(m[1]).toMatch(/^op=~?"/), n++);
    // ops, cmd_get and cmd_set read kv_ops (ep_cache_miss_rate reads kv_cmd_lookup on the 7.6 line).
    expect(n).toBeGreaterThanOrEqual(3);
  });

  it('every bridged stat is a row of the mapping table, and every row the bridge uses is a bucket or XDCR row', () => {
    expect(BRIDGED_KV.every((l) => KV_ROW_BY_LEGACY.has(l))).toBe(true);
    expect(BRIDGED_XDCR.every((l) => XDCR_ROW_BY_LEGACY.has(l))).toBe(true);
  });
});

describe('native-metrics bridge: the cache-miss ratio follows the server line', () => {
  // Prometheus anchors a label regex at both ends; so does this.
  const line = (version: string): string => {
    const before = new RegExp(`^(?:${VERSIONS_BEFORE_768})$`).test(version);
    const after = new RegExp(`^(?:${VERSIONS_FROM_768})$`).test(version);
    return before && !after ? 'bg_fetched/cmd_lookup' : after && !before ? 'get_misses/cmd_get' : 'neither';
  };

  it('classifies node versions as Couchbase changed the formula (7.0–7.6.7 against 7.6.8 and later)', () => {
    for (const v of ['7.0.5-7658-enterprise', '7.1.6-3955-enterprise', '7.2.4-7070-enterprise', '7.6.0-2176-enterprise', '7.6.2-3721-enterprise', '7.6.7-6545-enterprise', '7.6.2']) expect(line(v), v).toBe('bg_fetched/cmd_lookup');
    for (const v of ['7.6.8-7151-enterprise', '7.6.9-1-enterprise', '7.6.10-1234-enterprise', '7.7.0-1-enterprise', '8.0.0-3219-enterprise', '10.1.0-1-community', '7.6.8']) expect(line(v), v).toBe('get_misses/cmd_get');
    for (const v of ['6.6.5-10080-enterprise', '', 'unknown']) expect(line(v), v).toBe('neither');
  });

  it('reads the node versions from cbwatch and each formula from its own line of the mapping table', () => {
    const rules = BRIDGE_GROUPS.flatMap((g) => g.rules).filter((r) => r.record.endsWith('ep_cache_miss_ratio'));
    expect(rules.map((r) => r.record)).toEqual(['couchbase_bucket_node_ep_cache_miss_ratio', 'couchbase_bucket_ep_cache_miss_ratio']);
    for (const r of rules) {
      expect(r.needsCbwatch).toBe(true);
      expect(r.expr).toContain('couchbase_node_info{version=~');
      expect(r.expr).toContain('rate(kv_ep_bg_fetched[');
      expect(r.expr).toContain('rate(kv_cmd_lookup[');
      expect(r.expr).toContain('rate(kv_ops{op="get", result="miss"}[');
    }
  });
});

describe('native-metrics bridge: coverage of the dashboards and alerts', () => {
  const catalog = new Map(allFamilies().map((f) => [f.name, f]));
  const bridged = new Set(bridgedFamilies());

  it('records every bucket_stats and xdcr-stats family a dashboard or an alert reads', () => {
    const needed = [...usedFamilies()].filter((n) => {
      const f = catalog.get(n);
      return f !== undefined && (f.collector === 'bucket_stats' || xdcrStatFamilies().includes(n));
    });
    // The staleness alerts watch cbwatch's own sample timestamps: with the stat collectors off they have nothing to
    // watch (docs/native-metrics.md says so), and Couchbase has no such series to derive them from.
    // Not bridged yet: fragmentation (the mapping table's own derivation, which the bridge does not write as PromQL)
    // with the data files' size read beside it (ns_server's couch_docs_actual_disk_size, not in the 8.0 metadata),
    // and the per-node connection count (kv_curr_connections has no bucket label, which the bridge cannot place
    // under a bucket): CouchbaseBucketFragmentationHigh and CouchbaseBucketConnectionsNearLimit need cbwatch.
    const notDerivable = [
      'couchbase_bucket_last_sample_timestamp_seconds',
      'couchbase_xdcr_last_sample_timestamp_seconds',
      'couchbase_bucket_couch_docs_fragmentation_ratio',
      'couchbase_bucket_couch_docs_actual_disk_size_bytes',
      'couchbase_bucket_node_curr_connections',
    ];
    expect(needed.length).toBeGreaterThan(20);
    expect(needed.filter((n) => !bridged.has(n) && !notDerivable.includes(n))).toEqual([]);
  });

  it('records only cbwatch families, each with the catalog labels (plus couchbase_cluster)', () => {
    for (const name of bridged) {
      const f = catalog.get(name);
      expect(f, name).toBeDefined();
      const rule = rules.find((r) => r.record === name);
      const by = [...(rule?.expr ?? '').matchAll(/by \(([^)]*)\)/g)].map((m) => (m[1] as string).split(',').map((s) => s.trim()));
      const inner = rules.find((r) => r.record === `couchbase_native:${name.slice('couchbase_'.length)}:main`);
      const labels = new Set(inner ? [...((inner.expr.match(/by \(([^)]*)\)/)?.[1] ?? '').split(',').map((s) => s.trim())), 'target_cluster_name'] : (by[0] ?? []));
      expect([...labels].sort(), name).toEqual(['couchbase_cluster', ...(f?.labels ?? [])].sort());
    }
  });

  it('records every statistics family of the query, index, search_index, eventing, analytics and processes collectors a dashboard or an alert reads, each from native series only', () => {
    // What no native series gives stays cbwatch's: the index state (/indexStatus) and the eventing function status.
    const fromRest = new Set([...Object.values(INDEX_STATE_FAMILIES), ...Object.values(EVENTING_STATUS_FAMILIES)].map((f) => f.name));
    const needed = [...usedFamilies()].filter((n) => {
      const f = catalog.get(n);
      return f !== undefined && ['query', 'index', 'search_index', 'eventing', 'analytics', 'processes'].includes(f.collector) && !fromRest.has(n);
    });
    expect(needed.filter((n) => !bridged.has(n))).toEqual([]);
    for (const r of rules.filter((x) => x.service !== undefined)) {
      expect(r.needsCbwatch, r.record).toBeUndefined();
      expect(selected(r.expr).filter((x) => x.startsWith('couchbase_')), r.record).toEqual([]);
    }
    expect(bridgedServiceFamilies().length).toBeGreaterThanOrEqual(56);
  });

  it('the cbwatch scrape of the example drops exactly the xdcr stat families, and no family the bridge needs from cbwatch', () => {
    const cfg = parse(examplePrometheusConfig()) as { scrape_configs: { job_name: string; metric_relabel_configs?: { regex: string; action: string }[] }[] };
    const job = cfg.scrape_configs.find((j) => j.job_name === 'cbwatch');
    const re = new RegExp(`^(?:${job?.metric_relabel_configs?.[0]?.regex ?? ''})$`);
    for (const name of ['couchbase_xdcr_changes_left', 'couchbase_xdcr_docs_rep_queue', 'couchbase_xdcr_rate_replicated_per_second', 'couchbase_xdcr_last_sample_timestamp_seconds']) expect(re.test(name), name).toBe(true);
    for (const name of ['couchbase_xdcr_remote_cluster_info', 'couchbase_xdcr_replication_paused', 'couchbase_xdcr_replication_errors', 'couchbase_xdcr_task_changes_left', 'couchbase_xdcr_remote_cluster_deleted', 'couchbase_up']) expect(re.test(name), name).toBe(false);
    // The service statistics the bridge records come from it only; the index state and function status stay cbwatch's.
    for (const name of bridgedServiceFamilies()) expect(re.test(name), name).toBe(true);
    for (const name of ['couchbase_index_state', 'couchbase_index_build_progress_ratio', 'couchbase_eventing_function_status', 'couchbase_search_active_queries']) expect(re.test(name), name).toBe(false);
  });
});

describe('native-metrics bridge: generated files', () => {
  it('are part of npm run generate and checked in as generated', () => {
    // generate.ts writes the files when imported (it is the command), so its source is read instead.
    expect(readFileSync(join(PACKAGE_ROOT, 'src', 'tools', 'generate.ts'), 'utf8')).toMatch(/^\s+\.\.\.renderBridge\(\),$/m);
    for (const [path, text] of Object.entries(renderBridge())) {
      expect(readFileSync(join(PACKAGE_ROOT, path), 'utf8'), `${path} is stale (npm run generate)`).toBe(text);
    }
  });

  it('the docs carry the example configuration and the cbwatch configuration', () => {
    const doc = renderBridge()['docs/native-metrics.md'] as string;
    expect(doc).toContain(examplePrometheusConfig().trimEnd());
    for (const line of CBWATCH_NATIVE_CONFIG.trimEnd().split('\n')) expect(doc).toContain(`   ${line}`);
  });

  const jsonnet = requireBinary('jsonnet');
  it.skipIf(!jsonnet)("the mixin's prometheusRules equal alerts/native-bridge.rules.yml", () => {
    const out = execFileSync(jsonnet as string, ['-J', PACKAGE_ROOT, '-e', '(import "mixin.libsonnet").prometheusRules'], { cwd: PACKAGE_ROOT, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual(parse(readFileSync(join(PACKAGE_ROOT, 'alerts', 'native-bridge.rules.yml'), 'utf8')));
    const faster = execFileSync(jsonnet as string, ['-J', PACKAGE_ROOT, '-e', '((import "mixin.libsonnet") + { _config+:: { nativeBridgeRateWindow: "5m" } }).prometheusRules'], { cwd: PACKAGE_ROOT, encoding: 'utf8' });
    expect(faster).toContain('rate(kv_ep_bg_fetched[5m])');
    expect(faster).not.toContain('[2m]');
  });

  const promtool = requireBinary('promtool');
  // bridge.test.yml: the values, computed by hand; bridge-cache-miss.test.yml: the ratio's formula by node version;
  // alerts.test.yml: cbwatch's alerts fire on bridged series.
  // bridge-services.test.yml: the query, index, Search and eventing families, computed by hand.
  for (const name of ['bridge.test.yml', 'bridge-cache-miss.test.yml', 'alerts.test.yml', 'bridge-services.test.yml']) {
    it.skipIf(!promtool)(`promtool test rules alerts/tests/native/${name}`, () => {
      const file = join(PACKAGE_ROOT, 'alerts', 'tests', 'native', name);
      expect(readFileSync(file, 'utf8')).toContain('  - ../../native-bridge.rules.yml');
      let out = '';
      let code = 0;
      try {
        out = execFileSync(promtool as string, ['test', 'rules', file], { encoding: 'utf8', stdio: 'pipe' });
      } catch (err) {
        const e = err as { status?: number; stdout?: string; stderr?: string };
        code = e.status ?? 1;
        out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
      }
      expect(code, out).toBe(0);
      expect(out).toMatch(/SUCCESS/);
    });
  }

  it.skipIf(!promtool)('the example Prometheus configuration passes promtool check config (with both rule files)', () => {
    const out = execFileSync(promtool as string, ['check', 'config', join(PACKAGE_ROOT, 'alerts', 'native-prometheus.example.yml')], { encoding: 'utf8' });
    expect(out).toMatch(/SUCCESS: 2 rule files found/);
    expect(out).toMatch(/native-bridge\.rules\.yml\n\s+SUCCESS: \d+ rules found/);
  });
});

describe('the cbwatch configuration docs/native-metrics.md gives', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-native-cfg-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is accepted, with bucket_stats, query, search_index, analytics and processes off and the xdcr stats polled once a day, every other collector on', () => {
    const pw = join(dir, 'couchbase.password');
    writeFileSync(pw, 'not-a-real-password\n');
    const file = join(dir, 'cbwatch.yml');
    writeFileSync(file, CBWATCH_NATIVE_CONFIG.replace('/etc/cbwatch/couchbase.password', pw));
    const c = loadConfig(parseArgs(['--config', file]).flags, {});
    const cl = c.clusters[0];
    expect(cl?.name).toBe('prod-eu');
    expect(cl?.collectors.bucket_stats.enabled).toBe(false);
    expect(cl?.collectors.xdcr.enabled).toBe(true);
    expect(cl?.collectors.xdcr.fast_stats).toEqual([]);
    expect(cl?.collectors.xdcr.slow_stats_interval).toBe(24 * 3600 * 1000);
    for (const n of ['query', 'search_index', 'analytics', 'processes'] as const) expect(cl?.collectors[n].enabled, n).toBe(false);
    for (const n of ['buckets', 'nodes', 'tasks', 'autofailover', 'certificates', 'security', 'search', 'index', 'eventing'] as const) expect(cl?.collectors[n].enabled, n).toBe(true);
  });
});

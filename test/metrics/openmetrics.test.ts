/**
 * The OpenMetrics form, byte for byte against prom-client's registry in its OpenMetrics mode (the reference, as
 * test/metrics/render.test.ts is for the text form), for what cbwatch exposes: gauges (info and one-hot families
 * included, as gauges), counters, and prom-client's histograms; and through the whole exposition, gzip included.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { preparePart } from '../../src/metrics/part.js';
import { SampleSet, defineFamily } from '../../src/metrics/family.js';
import { EOF_LINE, counterHeaderEdits, omChunks } from '../../src/metrics/openmetrics.js';
import { renderSets, type LabelledSet } from '../../src/metrics/render.js';

const bytes = defineFamily('buckets', 'couchbase_om_bytes', 'gauge', 'Bytes, with a "quote" and \\ backslash.', ['bucket', 'node'], 'bytes');
const ops = defineFamily('buckets', 'couchbase_om_ops_total', 'counter', 'Operations\nover two lines.', ['bucket']);
const errors = defineFamily('buckets', 'couchbase_om_errors_total', 'counter', 'Errors.', []);
const info = defineFamily('exporter', 'couchbase_om_build_info', 'gauge', 'Build.', ['version'], 'info');
const state = defineFamily('exporter', 'couchbase_om_state', 'gauge', 'One-hot.', ['state']);

function set(rows: Array<[typeof bytes, Record<string, string>, number]>): SampleSet {
  const s = new SampleSet();
  for (const [def, labels, v] of rows) s.add(def, labels, v);
  return s;
}

const sets: LabelledSet[] = [
  {
    base: { couchbase_cluster: 'prod' },
    set: set([
      [bytes, { bucket: 'travel-sample', node: 'cb1.example:8091' }, 1024],
      [bytes, { bucket: 'we"ird\\name\nline', node: 'cb2' }, 0.5],
      [ops, { bucket: 'travel-sample' }, 12345678901234],
      [ops, { bucket: 'b2' }, 0],
      [errors, {}, 3],
      [state, { state: 'running' }, 1],
      [state, { state: 'failed' }, 0],
    ]),
  },
  { base: { couchbase_cluster: 'dr' }, set: set([[ops, { bucket: 'travel-sample' }, 7], [bytes, { bucket: 'x', node: 'n' }, 1e21]]) },
  { base: {}, set: set([[info, { version: '1.0 "beta"' }, 1]]) },
];

/** The sets through prom-client Gauges and Counters in a registry of the given content type. */
async function viaPromClient(contentType: string): Promise<string> {
  const registry = new client.Registry();
  registry.setContentType(contentType as never);
  const made = new Map<string, client.Gauge | client.Counter>();
  for (const { base, set: s } of sets) {
    for (const { def, samples } of s.families()) {
      if (!made.has(def.name)) {
        const labelNames = [...Object.keys(base), ...def.labels];
        made.set(
          def.name,
          def.type === 'counter' ? new client.Counter({ name: def.name, help: def.help, labelNames, registers: [] }) : new client.Gauge({ name: def.name, help: def.help, labelNames, registers: [] }),
        );
      }
      const m = made.get(def.name) as client.Gauge | client.Counter;
      for (const smp of samples) {
        const labels = { ...base, ...smp.labels };
        if (m instanceof client.Counter) m.inc(labels, smp.value);
        else m.set(labels, smp.value);
      }
    }
  }
  for (const name of [...made.keys()].sort()) registry.registerMetric(made.get(name) as client.Metric);
  return (await registry.metrics()).replace(/\n\n+/g, '\n');
}

/** A part's OpenMetrics bytes, as the exposition writes them, and `# EOF`. */
function omOf(text: string): string {
  const part = preparePart('t', text);
  const plain = Buffer.from(text, 'utf8');
  const chunks = part.om === undefined ? [plain] : omChunks(plain, part.om.edits);
  return Buffer.concat([...chunks, EOF_LINE]).toString('utf8');
}

describe('OpenMetrics form', () => {
  it('is the bytes prom-client writes in OpenMetrics mode for the same gauges and counters', async () => {
    const text = renderSets(sets);
    // The text form is prom-client's (render.test.ts); its OpenMetrics form too.
    expect(text).toBe(await viaPromClient(client.Registry.PROMETHEUS_CONTENT_TYPE));
    const om = omOf(text);
    expect(om).toBe(await viaPromClient(client.Registry.OPENMETRICS_CONTENT_TYPE));
    // Hand-written: the counter's family is named without _total, its samples keep it; gauges do not move.
    expect(om).toContain('# HELP couchbase_om_ops Operations\\nover two lines.\n# TYPE couchbase_om_ops counter\ncouchbase_om_ops_total{couchbase_cluster="prod",bucket="travel-sample"} 12345678901234\n');
    expect(om).toContain('# HELP couchbase_om_errors Errors.\n# TYPE couchbase_om_errors counter\ncouchbase_om_errors_total{couchbase_cluster="prod"} 3\n');
    expect(om).toContain('# TYPE couchbase_om_build_info gauge\ncouchbase_om_build_info{version="1.0 \\"beta\\""} 1\n');
    expect(om).not.toContain('# UNIT');
    expect(om.endsWith('\n# EOF\n')).toBe(true);
    expect(om.match(/# EOF/g)).toHaveLength(1);
  });

  it('is prom-client\'s for its own counters and histograms (the request metrics, rendered by prom-client)', async () => {
    const fill = (registry: client.Registry) => {
      const c = new client.Counter({ name: 'cbwatch_om_requests_total', help: 'Requests.', labelNames: ['code'], registers: [registry] });
      const h = new client.Histogram({ name: 'cbwatch_om_duration_seconds', help: 'Latency.', labelNames: ['endpoint'], buckets: [0.1, 1], registers: [registry] });
      c.inc({ code: '200' }, 5);
      h.observe({ endpoint: '/a' }, 0.05);
      h.observe({ endpoint: '/a' }, 3);
    };
    const textRegistry = new client.Registry();
    fill(textRegistry);
    const omRegistry = new client.Registry();
    omRegistry.setContentType(client.Registry.OPENMETRICS_CONTENT_TYPE as never);
    fill(omRegistry);
    const text = (await textRegistry.metrics()).replace(/\n\n+/g, '\n');
    expect(omOf(text)).toBe(await omRegistry.metrics());
  });

  it('finds no edit in text without counters, and only at line starts', () => {
    expect(counterHeaderEdits(Buffer.from('# HELP a_bytes x\n# TYPE a_bytes gauge\na_bytes 1\n'))).toEqual([]);
    // A HELP text that mentions "# TYPE x_total counter" is not a TYPE line.
    expect(counterHeaderEdits(Buffer.from('# HELP a_bytes see # TYPE x_total counter\n# TYPE a_bytes gauge\na_bytes 1\n'))).toEqual([]);
    const edits = counterHeaderEdits(Buffer.from('# TYPE a_total counter\na_total 1\n'));
    expect(edits.map((e) => Buffer.from(e.text).toString())).toEqual(['# TYPE a counter\n']);
  });

  it('deflates both forms from shared pieces: each inflates to its own text', () => {
    const text = renderSets(sets);
    const part = preparePart('t', text);
    // Sync-flushed, not final: an empty final block ends the stream, as the gzip splice does.
    const inflate = (d: Uint8Array) => inflateRawSync(Buffer.concat([d, deflateRawSync(Buffer.alloc(0))])).toString();
    expect(inflate(part.deflated)).toBe(text);
    const om = part.om;
    expect(om?.edits).toHaveLength(2);
    expect(inflate(om?.deflated as Buffer)).toBe(omOf(text).replace(/# EOF\n$/, ''));
  });
});

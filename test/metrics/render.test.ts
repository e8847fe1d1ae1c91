import client from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { SampleSet, defineFamily } from '../../src/metrics/family.js';
import { renderSets, renderSetsBytes, type LabelledSet } from '../../src/metrics/render.js';

const bytes = defineFamily('buckets', 'couchbase_render_bytes', 'gauge', 'Bytes, with a "quote" and \\ backslash.', ['bucket', 'node'], 'bytes');
const ops = defineFamily('buckets', 'couchbase_render_ops_total', 'counter', 'Operations.', ['bucket']);
const up = defineFamily('exporter', 'couchbase_render_up', 'gauge', 'Up.', []);
const info = defineFamily('exporter', 'couchbase_render_info', 'gauge', 'Multi-line\nhelp.', ['version']);

function set(rows: Array<[typeof bytes, Record<string, string>, number]>): SampleSet {
  const s = new SampleSet();
  for (const [def, labels, v] of rows) s.add(def, labels, v);
  return s;
}

/** The same sets rendered the obvious way: one prom-client Gauge or Counter per family. */
async function viaInstruments(sets: readonly LabelledSet[]): Promise<string> {
  const registry = new client.Registry();
  const made = new Map<string, client.Gauge | client.Counter>();
  const ordered: Array<{ name: string; fill: () => void }> = [];
  for (const { base, set: s } of sets) {
    for (const { def, samples } of s.families()) {
      if (!made.has(def.name)) {
        const labelNames = [...Object.keys(base), ...def.labels];
        const m = def.type === 'counter'
          ? new client.Counter({ name: def.name, help: def.help, labelNames, registers: [] })
          : new client.Gauge({ name: def.name, help: def.help, labelNames, registers: [] });
        made.set(def.name, m);
      }
      const m = made.get(def.name) as client.Gauge | client.Counter;
      for (const smp of samples) {
        const labels = { ...base, ...smp.labels };
        ordered.push({
          name: def.name,
          fill: () => (m instanceof client.Counter ? smp.value >= 0 && m.inc(labels, smp.value) : m.set(labels, smp.value)),
        });
      }
    }
  }
  for (const o of ordered) o.fill();
  for (const name of [...made.keys()].sort()) {
    const m = made.get(name) as client.Metric;
    if ((await m.get()).values.length > 0) registry.registerMetric(m);
  }
  return (await registry.metrics()).replace(/\n\n+/g, '\n');
}

describe('renderSets', () => {
  const sets: LabelledSet[] = [
    {
      base: { couchbase_cluster: 'prod' },
      set: set([
        [bytes, { bucket: 'travel-sample', node: 'cb1.example:8091' }, 1024],
        [bytes, { bucket: 'we"ird\\name\nline', node: 'cb2' }, 0.5],
        [bytes, { bucket: 'inf', node: 'cb2' }, Number.POSITIVE_INFINITY],
        [ops, { bucket: 'travel-sample' }, 12345678901234],
        [ops, { bucket: 'negative' }, -3],
        [up, {}, 1],
      ]),
    },
    {
      base: { couchbase_cluster: 'dr' },
      set: set([
        [bytes, { bucket: 'travel-sample', node: 'cb9' }, -1],
        [ops, { bucket: 'travel-sample' }, 0],
        [up, {}, 0],
      ]),
    },
    { base: {}, set: set([[info, { version: '1.0 "beta"' }, 1], [bytes, { bucket: 'b', node: 'n' }, 1e21], [bytes, { bucket: 'c', node: 'n' }, 1.5e-7]]) },
  ];

  // The renderer writes the text itself (see render.ts for why); prom-client is the reference it must match.
  it('writes the same bytes as prom-client Gauges and Counters filled with the same samples', async () => {
    const ours = await renderSets(sets);
    expect(ours).toBe(await viaInstruments(sets));
    expect(ours).toContain('bucket="we\\"ird\\\\name\\nline"');
    // Non-finite values and negative counters never reach the renderer: SampleSet.add's numeric guard drops them.
    expect(ours).not.toContain('+Inf');
    expect(ours).not.toContain('bucket="negative"');
  });

  it('writes families in name order with one HELP and TYPE each', async () => {
    const text = await renderSets(sets);
    const helps = text.split('\n').filter((l) => l.startsWith('# HELP')).map((l) => l.split(' ')[2]);
    expect(helps).toEqual(['couchbase_render_bytes', 'couchbase_render_info', 'couchbase_render_ops_total', 'couchbase_render_up']);
    expect(text.match(/# TYPE couchbase_render_ops_total counter/g)).toHaveLength(1);
  });

  it('reuses the text of a set it rendered before beside other sets, and renders a new set afresh', async () => {
    const kept = set([[bytes, { bucket: 'a', node: 'n' }, 1]]);
    const spy = vi.spyOn(kept, 'columns');
    const other = set([[bytes, { bucket: 'a', node: 'n' }, 3]]);
    const first = await renderSets([
      { base: { couchbase_cluster: 'x' }, set: kept },
      { base: { couchbase_cluster: 'y' }, set: other },
    ]);
    const replaced = set([[bytes, { bucket: 'a', node: 'n' }, 2]]);
    const second = await renderSets([
      { base: { couchbase_cluster: 'x' }, set: kept },
      { base: { couchbase_cluster: 'y' }, set: replaced },
    ]);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(first).toContain('couchbase_render_bytes{couchbase_cluster="y",bucket="a",node="n"} 3');
    expect(second).toContain('couchbase_render_bytes{couchbase_cluster="x",bucket="a",node="n"} 1');
    expect(second).toContain('couchbase_render_bytes{couchbase_cluster="y",bucket="a",node="n"} 2');
    // The same set under another cluster label is written with that label, not from the cache.
    expect(await renderSets([{ base: { couchbase_cluster: 'z' }, set: kept }, { base: { couchbase_cluster: 'y' }, set: replaced }])).toContain('couchbase_cluster="z"');
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('keeps no text for a render of one set (its next render is of a new set)', async () => {
    const alone = set([[bytes, { bucket: 'a', node: 'n' }, 1]]);
    const spy = vi.spyOn(alone, 'columns');
    const a = await renderSets([{ base: { couchbase_cluster: 'x' }, set: alone }]);
    const b = await renderSets([{ base: { couchbase_cluster: 'x' }, set: alone }]);
    expect(b).toBe(a);
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('leaves out a family whose every sample was dropped', async () => {
    const text = await renderSets([{ base: {}, set: set([[ops, { bucket: 'a' }, -1]]) }]);
    expect(text).not.toContain('couchbase_render_ops_total');
    expect(text.trim()).toBe('');
  });
});

describe('renderSetsBytes', () => {
  it('writes the UTF-8 bytes of the same text, growing its buffer past 64 KiB', () => {
    // 3,000 series whose labels mix 1-, 2-, 3- and 4-byte characters: lines land across many chunk ends.
    const s = new SampleSet();
    for (let i = 0; i < 3000; i++) s.add(bytes, { bucket: `b-${i}-é中😀`, node: `n${i % 7}` }, i);
    // One line longer than a chunk (a label value at the cap of 64 KiB would be shortened: the cap is lifted).
    const wide = new SampleSet({ maxLabelValueLength: 200_000 });
    wide.add(bytes, { bucket: 'ü'.repeat(70_000), node: 'n' }, 1);
    const sets: LabelledSet[] = [{ base: { couchbase_cluster: 'ç' }, set: s }];
    const text = renderSets(sets);
    const buf = renderSetsBytes(sets);
    expect(Buffer.byteLength(text)).toBeGreaterThan(3 * 64 * 1024);
    expect(buf.equals(Buffer.from(text, 'utf8'))).toBe(true);
    // Grown by half each time from 64 KiB (no larger than half again what it had to hold).
    expect(buf.buffer.byteLength).toBeGreaterThanOrEqual(buf.length);
    expect(buf.buffer.byteLength).toBeLessThanOrEqual(buf.length * 1.5 + 70_000 * 2);
    const w: LabelledSet[] = [{ base: {}, set: wide }];
    expect(renderSetsBytes(w).equals(Buffer.from(renderSets(w), 'utf8'))).toBe(true);
    // Hand-written: the long line is the family's only series.
    expect(renderSets(w).split('\n')[2]).toBe(`couchbase_render_bytes{bucket="${'ü'.repeat(70_000)}",node="n"} 1`);
    expect(renderSetsBytes([]).length).toBe(0);
  });

  it('fills a buffer of the hinted size when the text fits, and grows one too small', () => {
    const s = new SampleSet();
    for (let i = 0; i < 5000; i++) s.add(bytes, { bucket: `bucket-${i}`, node: 'n1' }, i);
    const sets: LabelledSet[] = [{ base: {}, set: s }];
    const exact = Buffer.from(renderSets(sets), 'utf8');
    // A hint an eighth over the text (what a part's previous size gives): one buffer of that size, no growth.
    const hint = exact.length + Math.floor(exact.length / 8);
    const fitted = renderSetsBytes(sets, hint);
    expect(fitted.equals(exact)).toBe(true);
    expect(fitted.byteOffset).toBe(0);
    expect(fitted.buffer.byteLength).toBe(hint);
    // A part that shrank: the same bytes from the larger buffer.
    expect(renderSetsBytes(sets, exact.length * 10).equals(exact)).toBe(true);
    // A hint too small: the buffer grows and the text is whole.
    expect(renderSetsBytes(sets, 100).equals(exact)).toBe(true);
    // A small part's first render (no hint) starts at 64 KiB.
    const small: LabelledSet[] = [{ base: {}, set: set([[ops, { bucket: 'a' }, 1]]) }];
    const first = renderSetsBytes(small);
    expect(first.toString()).toBe(renderSets(small));
    expect(first.buffer.byteLength).toBe(64 * 1024);
  });
});

describe('SampleSet columns', () => {
  it('holds each family as labels and values in the order added, and its objects view says the same', () => {
    const s = new SampleSet();
    const a = { bucket: 'a', node: 'n1' };
    const b = { bucket: 'b', node: 'n1' };
    s.add(bytes, a, 3);
    s.add(bytes, b, 2.5);
    s.add(bytes, { bucket: 'a', node: 'n1' }, 9); // the same series again: the first one stays
    const oa = { bucket: 'a' };
    s.add(ops, oa, 7);
    const cols = s.columns();
    expect(cols.map((c) => c.def.name)).toEqual([bytes.name, ops.name]);
    expect(cols[0]?.labels).toEqual([a, b]);
    expect(cols[0]?.labels[0]).toBe(a); // the labels object given, not a copy
    expect(cols[0]?.values).toEqual([3, 2.5]);
    expect(cols[1]?.values).toEqual([7]);
    expect(s.duplicates).toBe(1);
    expect(s.families()[0]?.samples).toEqual([
      { labels: a, value: 3 },
      { labels: b, value: 2.5 },
    ]);
    expect(s.get(bytes.name, { bucket: 'b' })).toBe(2.5);
    expect(s.all(ops.name)).toEqual([{ labels: oa, value: 7 }]);
    // Sealed, then added to: the duplicate check is made again from the columns.
    s.seal();
    s.add(bytes, { bucket: 'b', node: 'n1' }, 1);
    s.add(bytes, { bucket: 'c', node: 'n1' }, 1);
    expect(s.duplicates).toBe(2);
    expect(s.columns()[0]?.values).toEqual([3, 2.5, 1]);
  });
});

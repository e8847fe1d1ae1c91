import client from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { SampleSet, defineFamily } from '../../src/metrics/family.js';
import { constants, crc32, inflateRawSync as inflateAll } from 'node:zlib';
import { PIECE_BYTES, PartWriter, preparePart } from '../../src/metrics/part.js';
import type { PreparedPart } from '../../src/metrics/part.js';
import { renderSets, renderSetsTo, type LabelledSet } from '../../src/metrics/render.js';

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

describe('PartWriter: a part deflated as it is rendered', () => {
  /** A part's deflate blocks end with a sync flush, not a final block. */
  const inflateRawSync = (b: Uint8Array): Buffer => inflateAll(b, { finishFlush: constants.Z_SYNC_FLUSH });

  /** Families of every kind, counters among them, with labels of 1- to 4-byte characters, in two clusters' sets. */
  function sets(): LabelledSet[] {
    const out: LabelledSet[] = [];
    for (const cluster of ['ç', 'z']) {
      const s = new SampleSet();
      for (let i = 0; i < 3000; i++) s.add(bytes, { bucket: `b-${i}-é中😀`, node: `n${i % 7}` }, i);
      for (let i = 0; i < 2000; i++) s.add(ops, { bucket: `b-${i}` }, i * 3);
      s.add(up, {}, 1);
      s.add(info, { version: '8.0.0' }, 1);
      out.push({ base: { couchbase_cluster: cluster }, set: s });
    }
    return out;
  }

  it('gives the part preparePart makes of the whole text, whatever the piece size: text, length, CRC and OpenMetrics form', () => {
    const all = sets();
    const text = Buffer.from(renderSets(all), 'utf8');
    const whole = preparePart('p', text);
    // Hand-checked: one counter family, so one edit (its HELP and TYPE lines), and the text spans many pieces.
    expect(whole.om?.edits).toHaveLength(1);
    expect(text.length).toBeGreaterThan(300 * 1024);
    for (const piece of [64, 4096, 64 * 1024, PIECE_BYTES]) {
      const w = new PartWriter(piece);
      renderSetsTo(w, all);
      const part = w.finish('p') as PreparedPart;
      expect(part.length).toBe(text.length);
      expect(inflateRawSync(part.deflated).equals(text)).toBe(true);
      expect(part.crc).toBe(crc32(text));
      expect(part.om?.edits.map((e) => [e.start, e.end, Buffer.from(e.text).toString()])).toEqual(whole.om?.edits.map((e) => [e.start, e.end, Buffer.from(e.text).toString()]));
      expect(part.om?.crc).toBe(whole.om?.crc);
      expect(inflateRawSync(part.om?.deflated as Buffer).equals(inflateRawSync(whole.om?.deflated as Buffer))).toBe(true);
    }
    // The counter's OpenMetrics header, by hand: the family named without _total.
    expect(inflateRawSync(whole.om?.deflated as Buffer).toString()).toContain('# HELP couchbase_render_ops Operations.\n# TYPE couchbase_render_ops counter\n');
  });

  it('takes a write longer than a piece whole, and gives nothing for an empty render', () => {
    // One line of 140 KB (a label value past the default cap: the cap is lifted), in pieces of 4 KiB.
    const wide = new SampleSet({ maxLabelValueLength: 200_000 });
    wide.add(bytes, { bucket: 'ü'.repeat(70_000), node: 'n' }, 1);
    const w = new PartWriter(4096);
    const all: LabelledSet[] = [{ base: {}, set: wide }];
    renderSetsTo(w, all);
    const part = w.finish('wide') as PreparedPart;
    const text = inflateRawSync(part.deflated).toString('utf8');
    expect(text).toBe(renderSets(all));
    expect(text.split('\n')[2]).toBe(`couchbase_render_bytes{bucket="${'ü'.repeat(70_000)}",node="n"} 1`);
    expect(part.om).toBeUndefined();
    const empty = new PartWriter();
    renderSetsTo(empty, []);
    expect(empty.finish('none')).toBeUndefined();
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

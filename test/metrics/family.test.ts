import { describe, expect, it } from 'vitest';
import { SampleSet, capLabelValue, defineFamily, sanitizeName } from '../../src/metrics/family.js';
import { renderSets } from '../../src/metrics/render.js';

const g = defineFamily('buckets', 'couchbase_test_bytes', 'gauge', 'A test family.', ['bucket'], 'bytes');
const c = defineFamily('buckets', 'couchbase_test_ops_total', 'counter', 'A test counter.', ['bucket']);

describe('defineFamily', () => {
  it('rejects names that break the conventions', () => {
    expect(() => defineFamily('x', 'couchbase_ops', 'counter', 'h')).toThrow(/_total/);
    expect(() => defineFamily('x', 'couchbase_items_total', 'gauge', 'h')).toThrow(/must not end/);
    expect(() => defineFamily('x', 'couchbase_a', 'gauge', 'h', ['cluster'])).toThrow(/invalid label/);
    expect(() => defineFamily('x', 'couchbase_a', 'gauge', 'h', ['type'])).toThrow(/invalid label/);
    expect(() => defineFamily('x', 'bad-name', 'gauge', 'h')).toThrow(/invalid metric name/);
  });
  it('sanitises arbitrary stat names', () => {
    expect(sanitizeName('ep_foo.bar-baz')).toBe('ep_foo_bar_baz');
    expect(sanitizeName('9lives')).toBe('_9lives');
  });
});

describe('SampleSet', () => {
  it('emits nothing for null, undefined and NaN', () => {
    const s = new SampleSet();
    s.add(g, { bucket: 'a' }, null);
    s.add(g, { bucket: 'b' }, undefined);
    s.add(g, { bucket: 'c' }, Number.NaN);
    expect(s.size).toBe(0);
  });
  it('is the one numeric guard: non-finite, the 2^64-1 marker (and its rounding) and negative counters are dropped and counted', () => {
    const s = new SampleSet();
    s.add(g, { bucket: 'nan' }, Number.NaN);
    s.add(g, { bucket: 'inf' }, Number.POSITIVE_INFINITY);
    s.add(g, { bucket: 'ninf' }, Number.NEGATIVE_INFINITY);
    // 18446744073709551615 as Couchbase sends it, and as JSON.stringify prints the double it becomes.
    s.add(g, { bucket: 'marker' }, JSON.parse('18446744073709551615') as number);
    s.add(g, { bucket: 'rounded' }, JSON.parse('18446744073709552000') as number);
    s.add(c, { bucket: 'neg' }, -1);
    // Kept: the largest exact integers, a negative gauge (a clock drift may be negative), a zero counter.
    s.add(g, { bucket: 'big' }, 2 ** 63);
    s.add(g, { bucket: 'drift' }, -0.25);
    s.add(c, { bucket: 'zero' }, 0);
    expect(Object.fromEntries(s.dropped)).toEqual({ non_finite: 3, unavailable_marker: 2, negative_counter: 1 });
    expect(s.all('couchbase_test_bytes').map((x) => x.labels.bucket)).toEqual(['big', 'drift']);
    expect(s.all('couchbase_test_ops_total').map((x) => x.labels.bucket)).toEqual(['zero']);
  });
  it('keeps the first of duplicate series and counts the rest', () => {
    const s = new SampleSet();
    s.add(g, { bucket: 'a' }, 1);
    s.add(g, { bucket: 'a' }, 2);
    expect(s.size).toBe(1);
    expect(s.duplicates).toBe(1);
    expect(s.get('couchbase_test_bytes', { bucket: 'a' })).toBe(1);
  });
  it('refuses labels that do not match the family', () => {
    const s = new SampleSet();
    expect(() => s.add(g, { node: 'x' }, 1)).toThrow(/expects labels/);
  });
});

describe('renderSets', () => {
  it('merges clusters into one block per family, sorted by name', async () => {
    const a = new SampleSet();
    a.add(g, { bucket: 'x"y' }, 5);
    a.add(c, { bucket: 'x' }, 7);
    const b = new SampleSet();
    b.add(g, { bucket: 'z' }, 1.5);
    const text = await renderSets([
      { base: { couchbase_cluster: 'one' }, set: a },
      { base: { couchbase_cluster: 'two' }, set: b },
    ]);
    expect(text).toBe(
      [
        '# HELP couchbase_test_bytes A test family.',
        '# TYPE couchbase_test_bytes gauge',
        'couchbase_test_bytes{couchbase_cluster="one",bucket="x\\"y"} 5',
        'couchbase_test_bytes{couchbase_cluster="two",bucket="z"} 1.5',
        '# HELP couchbase_test_ops_total A test counter.',
        '# TYPE couchbase_test_ops_total counter',
        'couchbase_test_ops_total{couchbase_cluster="one",bucket="x"} 7',
        '',
      ].join('\n'),
    );
  });
});

describe('label value cap', () => {
  // Written out by hand: Prometheus counts label_value_length_limit in UTF-8 bytes.
  const long = 'b'.repeat(5000);

  it('shortens a 5,000-character bucket name to 1,024 bytes by default, counted, still exported', () => {
    const s = new SampleSet();
    s.add(g, { bucket: long }, 1);
    const [sample] = s.all('couchbase_test_bytes');
    expect(sample?.value).toBe(1);
    const v = sample?.labels.bucket ?? '';
    expect(v.length).toBe(1024);
    expect(v.startsWith('b'.repeat(1024 - 17))).toBe(true);
    expect(v).toMatch(/~[0-9a-f]{16}$/);
    expect(s.capped.get('label_value_length')).toBe(1);
    // The exposition carries the short value only.
    const text = renderSets([{ base: {}, set: s }]);
    expect(text).not.toContain('b'.repeat(1100));
    expect(text).toContain(`bucket="${v}"`);
  });

  it('keeps distinct long values distinct, and the same value stable', () => {
    const s = new SampleSet();
    const a = `${long}a`;
    const b = `${long}b`;
    s.add(g, { bucket: a }, 1);
    s.add(g, { bucket: b }, 2);
    s.add(g, { bucket: a }, 3);
    const got = s.all('couchbase_test_bytes');
    expect(got.map((x) => x.value)).toEqual([1, 2]);
    expect(got[0]?.labels.bucket).not.toBe(got[1]?.labels.bucket);
    expect(s.duplicates).toBe(1);
    expect(capLabelValue(a, 1024)).toBe(got[0]?.labels.bucket);
    expect(s.capped.get('label_value_length')).toBe(3);
  });

  it('leaves values at the limit alone and counts nothing', () => {
    const s = new SampleSet({ maxLabelValueLength: 100 });
    s.add(g, { bucket: 'x'.repeat(100) }, 1);
    expect(s.all('couchbase_test_bytes')[0]?.labels.bucket).toBe('x'.repeat(100));
    expect(s.capped.size).toBe(0);
  });

  it('counts bytes, not characters, and never splits a character', () => {
    const s = new SampleSet({ maxLabelValueLength: 100 });
    const euro = '€'.repeat(40); // 40 characters, 120 UTF-8 bytes
    s.add(g, { bucket: euro }, 1);
    const v = s.all('couchbase_test_bytes')[0]?.labels.bucket ?? '';
    expect(Buffer.byteLength(v)).toBeLessThanOrEqual(100);
    // 100 - 17 = 83 bytes of prefix: 27 whole euro signs (81 bytes).
    expect(v.startsWith('€'.repeat(27) + '~')).toBe(true);
    expect(Buffer.from(v).toString('utf8')).toBe(v);
    const emoji = '😀'.repeat(30);
    expect(Buffer.byteLength(capLabelValue(emoji, 100))).toBeLessThanOrEqual(100);
    expect(capLabelValue(emoji, 100).startsWith('😀'.repeat(20) + '~')).toBe(true);
  });
});

describe('SampleSet.seal', () => {
  it('still keeps the first of two samples of one series when a sample is added after sealing', () => {
    const def = defineFamily('buckets', 'couchbase_test_sealed', 'gauge', 'A sealed test family.', ['bucket']);
    const set = new SampleSet();
    set.add(def, { bucket: 'a' }, 1);
    set.seal();
    set.add(def, { bucket: 'a' }, 2);
    set.add(def, { bucket: 'b' }, 3);
    expect(set.all('couchbase_test_sealed').map((s) => [s.labels.bucket, s.value])).toEqual([
      ['a', 1],
      ['b', 3],
    ]);
    expect(set.duplicates).toBe(1);
  });
});

/**
 * The range answers read straight from the text (range-reader.ts, through AnswerGrouping.readText) against the
 * same answers parsed by JSON.parse and walked as trees (AnswerGrouping.add): generated answers written with
 * whitespace anywhere JSON allows it, numbers in every JSON form, numeric strings Number() reads in its own ways,
 * labels that are not strings, escapes (where the reader gives up and JSON.parse decides), over two polls. And, by
 * hand, that the reader does read the answers Couchbase sends (it would be no use giving up on every one).
 */
import { CounterMemo } from '../../src/stats/counter-memo.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NativeMapRow } from '../../src/stats/native-map.js';
import { expectReadAsParsed, ser, tableRow, viewOf } from '../helpers/range-table.js';
import { AnswerGrouping, kvItemOf, StagedRequest } from '../../src/stats/range.js';
import { rowValue } from '../../src/stats/row-values.js';
import type { RangeItems } from '../../src/stats/range-groups.js';
import { idKey, Interner, QueryReader } from '../../src/stats/range-reader.js';

import { loadFixture } from '../helpers/collect.js';

const TABLE: readonly NativeMapRow[] = [
  tableRow('m0_rate', 'rate', [ser('m0', { op: 'get' })]),
  tableRow('m0_level', 'level', [ser('m0')]),
  tableRow('m1_mean', 'mean', [ser('m1')]),
  tableRow('m1_share', 'increase_ratio', [ser('m1', { op: 'set' })], [ser('m0')]),
  tableRow('m2_level', 'level', [ser('m2')]),
  tableRow('m2_rate', 'rate', [ser('m2')]),
];
const NAMES = ['m0', 'm1', 'm2'];

/** JSON text of a value with `ws()` between every two tokens (JSON allows whitespace there and only there). */
function write(v: unknown, ws: () => string): string {
  if (Array.isArray(v)) return `[${ws()}${v.map((x) => write(x, ws)).join(`${ws()},${ws()}`)}${ws()}]`;
  if (v !== null && typeof v === 'object') return `{${ws()}${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}${ws()}:${ws()}${write(x, ws)}`).join(`${ws()},${ws()}`)}${ws()}}`;
  return JSON.stringify(v);
}

const T0 = 1_700_000_000;
// A time: a number (integral, fractional, in exponent form) or a numeric string.
const time = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: T0, max: T0 + 100 }) },
  { weight: 1, arbitrary: fc.integer({ min: T0, max: T0 + 100 }).map(String) },
  { weight: 1, arbitrary: fc.double({ min: T0, max: T0 + 100, noNaN: true }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>('1.7e9', 17e8, '', ' 1700000050 ', '0x6553f100', 'Infinity') },
);
// A value: as the API sends them (strings), numbers, and what Number() reads its own way.
const value = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 1_000_000 }).map(String) },
  { weight: 2, arbitrary: fc.integer({ min: -50, max: 1_000_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: -50, max: 50 }) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>('', ' 7 ', '007', '-0', '+3', '1e3', '0x1f', 'NaN', 'Infinity', '-Infinity', '1_000', '123456789012345678901', '9007199254740993', 12345678901234567890, -0, 1e21) },
);
// Answers of two kinds: clean ones, which hold only what the reader reads, and mixed ones, which also hold, rarely,
// what it gives up on (an answer with one of those is parsed whole).
function answers(clean: boolean) {
  const rare = <T>(xs: readonly T[]) => (clean ? [] : [{ weight: 1, arbitrary: fc.constantFrom<T>(...xs) }]);
  const point = fc.oneof(
    { weight: 30, arbitrary: fc.tuple(time, value) as fc.Arbitrary<unknown> },
    { weight: 2, arbitrary: fc.tuple(time, value, fc.oneof(value, time)) as fc.Arbitrary<unknown> },
    { weight: 2, arbitrary: fc.constantFrom<unknown>([], [T0], null, true, 'odd', 5) },
    ...rare<unknown>([[T0, null], [{}, '1'], [[T0], '1'], {}]),
  );
  const labelValue = fc.oneof(
    { weight: 30, arbitrary: fc.constantFrom<unknown>('a', 'b', 'get', 'set', 'cb1.cbsim.local:8091', 'ÿ€😀', '') },
    // Prefixes of one another, and labels past RANGE_LIMITS.labelBytes (cut): the reader tries the previous entry's
    // string at each label's position first, and must see that `b` is not `b1`, nor a cut label the whole one.
    { weight: 6, arbitrary: fc.constantFrom<unknown>('b1', 'b10', 'ge', 'x'.repeat(1100), `${'x'.repeat(1100)}y`) },
    { weight: 2, arbitrary: fc.constantFrom<unknown>(5, null, true, -1.5e300) },
    ...rare<unknown>(['q"uote', 'back\\slash', 'new\nline', ['x'], { y: 1 }]),
  );
  const nodes = fc.oneof(
    { weight: 30, arbitrary: fc.constantFrom<unknown>(['n1:8091'], ['n2:8091'], ['n1:80911'], ['n1:809']) },
    { weight: 2, arbitrary: fc.constantFrom<unknown>([], ['n1:8091', 'n2:8091']) },
    ...rare<unknown>([[1], 'n1:8091', null, ['n"1']]),
  );
  const metric = fc.record({ nodes, bucket: labelValue, op: labelValue, name: fc.constantFrom('kv_ops', 'm0'), extra: labelValue }, { requiredKeys: ['nodes', 'bucket'] });
  const entry = fc.oneof(
    { weight: 30, arbitrary: fc.record({ metric, values: fc.array(point, { maxLength: 6 }) }) as fc.Arbitrary<unknown> },
    { weight: 3, arbitrary: fc.record({ values: fc.array(point, { maxLength: 2 }), metric, other: fc.constantFrom<unknown>(1, 'x', null) }) as fc.Arbitrary<unknown> },
    { weight: 3, arbitrary: fc.constantFrom<unknown>(null, 'x', 3, { metric: { nodes: ['n1:8091'] } }, { values: [[T0, '1']] }, {}) },
    ...rare<unknown>([[], { metric: null, values: [] }, { metric: {}, values: [], other: [1] }, { metric: {}, values: [], other: { z: 1 } }]),
  );
  return fc.oneof(
    { weight: 16, arbitrary: fc.record({ data: fc.array(entry, { maxLength: 8 }), errors: fc.constant([]), startTimestamp: fc.constant(T0), endTimestamp: fc.constant(T0 + 100) }, { requiredKeys: ['data'] }) as fc.Arbitrary<unknown> },
    ...(clean ? [] : [{ weight: 2, arbitrary: fc.record({ data: fc.array(entry, { maxLength: 3 }), errors: fc.constant([{ node: 'n2:8091', error: 'timeout' }]) }) as fc.Arbitrary<unknown> }]),
    ...rare<unknown>([null, {}, { errors: [] }, { data: 'x' }, { data: [], data2: [1] }, [], 'x']),
  );
}
const answer = fc.oneof({ weight: 3, arbitrary: answers(true) }, { weight: 1, arbitrary: answers(false) });
const spaces = fc.constantFrom('', '', '', ' ', '\n', '\t', '\r\n  ');

const view = (g: RangeItems) => viewOf(TABLE, g);

describe('reading the text against parsing it', () => {
  it('gives the groups, memo and error texts of the parsed answers, over two polls, however the text is spaced', () => {
    let read = 0;
    let parsedWhole = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.array(answer, { maxLength: 4 }), fc.boolean(), fc.array(spaces, { minLength: 1, maxLength: 8 })), { minLength: 2, maxLength: 2 }), (polls) => {
        const memoA: CounterMemo = new CounterMemo();
        const memoB: CounterMemo = new CounterMemo();
        for (const [answers, summedFirst, wss] of polls) {
          let k = 0;
          const ws = () => wss[k++ % wss.length] as string;
          const summed = new Set(summedFirst ? ['m0'] : []);
          // The parsed answers as JSON.parse makes them.
          const parsed = JSON.parse(write(answers, () => '')) as unknown[];
          expectReadAsParsed(TABLE, write(answers, ws), parsed, NAMES, summed, memoA, memoB);
          for (const x of answers) {
            const text = write(x, ws);
            if (new QueryReader(new Interner()).read(text, 0, false) === text.length) read++;
            else parsedWhole++;
          }
        }
      }),
      { numRuns: 1500 },
    );
    // Most answers are read by the reader (the comparison is about it), some parsed whole.
    expect(read).toBeGreaterThan(2 * parsedWhole);
    expect(parsedWhole).toBeGreaterThan(100);
    // 1,500 generated runs of two polls each: beyond the default 30 s when the machine is shared and busy.
  }, 180_000);

  it('a broken answer anywhere throws SyntaxError and changes nothing, as the parse does', () => {
    fc.assert(
      fc.property(fc.array(answer, { minLength: 1, maxLength: 3 }), fc.nat(), fc.constantFrom('', 'x', ',', '}', ']', '"', '01', '1.', '-', 'tru', '\u0001'), (answers, at, junk) => {
        const text = write(answers, () => '');
        const cut = at % (text.length + 1);
        const broken = text.slice(0, cut) + junk + text.slice(cut + (junk === '' ? 1 : 0));
        let valid = true;
        try {
          JSON.parse(broken);
        } catch {
          valid = false;
        }
        if (valid) return;
        const memo: CounterMemo = new CounterMemo([['k', { t: 1, v: 2 }]]);
        const g = new AnswerGrouping(TABLE, kvItemOf, memo);
        expect(() => g.readText(broken, NAMES, new Set())).toThrow(SyntaxError);
        expect([...memo]).toEqual([['k', { t: 1, v: 2 }]]);
        expect(g.done().items.size).toBe(0);
      }),
      { numRuns: 1500 },
    );
  });
});

describe('reading the text against parsing it, by hand: what a generated value cannot hold', () => {
  // JSON.parse keeps the last of two equal keys; the walk then keeps a label only when that last value is a string.
  it.each([
    ['a label given twice, the last a string', '{"metric":{"nodes":["n1:8091"],"bucket":"a","bucket":"b"},"values":[[1700000000,"1"],[1700000010,"3"]]}'],
    ['a label given twice, the last not a string', '{"metric":{"nodes":["n1:8091"],"bucket":"a","op":"get","op":5},"values":[[1700000000,"1"],[1700000010,"3"]]}'],
    ['nodes given twice', '{"metric":{"nodes":["n2:8091"],"bucket":"a","nodes":["n1:8091"]},"values":[[1700000000,"1"],[1700000010,"4"]]}'],
    ['nodes given twice, the last with two', '{"metric":{"nodes":["n2:8091"],"bucket":"a","nodes":["n1:8091","n2:8091"]},"values":[[1700000000,"1"]]}'],
    ['values before metric', '{"values":[[1700000000,"-2"],[1700000010,"7"]],"metric":{"nodes":["n1:8091"],"bucket":"a","op":"get"}}'],
  ])('%s', (what, entryText) => {
    const body = `[{"data":[${entryText}],"errors":[]}]`;
    const a = new AnswerGrouping(TABLE, kvItemOf, new CounterMemo());
    const staged = a.readText(body, ['m0'], new Set());
    a.commit(staged as StagedRequest);
    const b = new AnswerGrouping(TABLE, kvItemOf, new CounterMemo());
    b.add([{ metric: 'm0', raw: (JSON.parse(body) as unknown[])[0], summed: false }]);
    expect(view(a.done())).toEqual(view(b.done()));
    // A label given twice is left to the parse; the rest the reader reads.
    expect(new QueryReader(new Interner()).read(body, 1, false)).toBe(what.startsWith('a label given twice') ? -1 : body.length - 1);
  });
});

describe('one key per series, however its answer is read', () => {
  it('a series read from the text, then from a parsed answer (an errors entry is parsed), counts from its previous newest point', () => {
    const memo: CounterMemo = new CounterMemo();
    const series = '{"metric":{"nodes":["n1:8091"],"bucket":"a","op":"get","name":"m0"},"values":';
    const poll = (body: string) => {
      const g = new AnswerGrouping(TABLE, kvItemOf, memo);
      g.commit(g.readText(body, ['m0'], new Set()) as StagedRequest);
      return g.done();
    };
    poll(`[{"data":[${series}[[${T0},"100"],[${T0 + 10},"110"]]}],"errors":[]}]`);
    const [key] = [...memo][0] as [string, unknown];
    const rec = memo.slotOf(key);
    // The window starts before the previous newest point: counted from the start, the rate would be 50/20 s.
    const g = poll(`[{"data":[${series}[[${T0},"100"],[${T0 + 10},"110"],[${T0 + 20},"150"]]}],"errors":[{"node":"n2:8091","error":"timeout"}]}]`);
    expect(rowValue(TABLE[0] as NativeMapRow, g, 'a', 'n1:8091')).toBe(4);
    expect(memo.size).toBe(1);
    expect(memo.slotOf(key)).toBe(rec);
  });
});

describe('QueryReader, by hand', () => {
  const reader = () => new QueryReader(new Interner());

  it('reads the documented answers whole (docs-server rest-statistics-multiple), and what it reads', () => {
    const docs = loadFixture<unknown[]>('pools-default-stats-range/docs-server-7.0plus-multiple-post.json');
    for (const [i, a] of docs.entries()) {
      const text = JSON.stringify(a, null, 2);
      expect(reader().read(text, 0, false), `answer ${i}`).toBe(text.length);
    }
    const r = reader();
    const text = JSON.stringify(docs[1]);
    r.read(text, 0, false);
    expect(r.entries).toMatchObject([{ labels: { name: 'kv_disk_write_queue' }, node: '10.144.210.101:8091', from: 0, to: 2 }]);
    expect([...r.run.t.slice(0, 2)]).toEqual([1623745200_000, 1623745260_000]);
    expect([...r.run.v.slice(0, 2)]).toEqual([0, 0]);
  });

  it('reads an answer shaped as the simulator and Couchbase send it: labels, one node, string values', () => {
    const text = '{"data":[{"metric":{"bucket":"b1","name":"kv_ops","nodes":["n1:8091"],"op":"get","result":"hit"},"values":[[1700000000,"12"],[1700000010,"15.5"]]}],"errors":[],"startTimestamp":1700000000,"endTimestamp":1700000010}';
    const r = reader();
    expect(r.read(text, 0, false)).toBe(text.length);
    expect(r.entries).toMatchObject([{ labels: { bucket: 'b1', name: 'kv_ops', op: 'get', result: 'hit' }, node: 'n1:8091', from: 0, to: 2 }]);
    expect([...r.run.v.slice(0, 2)]).toEqual([12, 15.5]);
    // Summed over the nodes: every series is the pseudo-node's.
    expect(r.read(text.replace('["n1:8091"]', '["n1:8091","n2:8091"]'), 0, true)).toBeGreaterThan(0);
    expect(r.entries[0]?.node).toBe('\u0000all');
  });

  it("reads each entry's own labels and node where the previous entry's differ by a prefix, a position or a cut", () => {
    const long = 'x'.repeat(1100);
    const metrics = [
      { nodes: ['n1:8091'], name: 'kv_ops', bucket: 'b1' },
      { nodes: ['n1:80911'], name: 'kv_ops', bucket: 'b10' },
      { nodes: ['n1:809'], name: 'kv_ops', bucket: 'b' },
      { nodes: ['n1:8091'], bucket: 'b1', name: 'kv_ops' },
      { name: 'kv_ops', nodes: ['n1:8091'], bucket: long },
      { name: 'kv_ops', nodes: ['n1:8091'], bucket: `${long}y` },
      { name: 'kv_ops', nodes: ['n1:8091'], bucket: long, op: 'get' },
      { name: 'kv_ops', nodes: ['n1:8091'], op: 'get', bucket: 'b1' },
    ];
    const text = JSON.stringify({ data: metrics.map((metric, i) => ({ metric, values: [[T0 + i, String(i)]] })), errors: [] });
    const r = reader();
    expect(r.read(text, 0, false)).toBe(text.length);
    const cutA = r.entries[3]?.labels.bucket ?? '';
    const cutB = r.entries[4]?.labels.bucket ?? '';
    // Written out by hand: each entry's own node, bucket and op; the first and fourth entries are one series (merged).
    expect(r.entries.map((e) => [e.node, e.labels.bucket, e.labels.op])).toEqual([
      ['n1:8091', 'b1', undefined],
      ['n1:80911', 'b10', undefined],
      ['n1:809', 'b', undefined],
      ['n1:8091', cutA, undefined],
      ['n1:8091', cutB, undefined],
      ['n1:8091', cutA, 'get'],
      ['n1:8091', 'b1', 'get'],
    ]);
    // The long buckets are cut, each to a label of its own.
    for (const c of [cutA, cutB]) {
      expect(c.startsWith('x'.repeat(1000))).toBe(true);
      expect(Buffer.byteLength(c)).toBeLessThanOrEqual(1024);
    }
    expect(cutA).not.toBe(cutB);
    expect(r.entries.map((e) => [...r.run.v.slice(e.from, e.to)])).toEqual([[0, 3], [1], [2], [4], [5], [6], [7]]);
  });

  it("reads the right strings after the interner has given the previous entry's numbers to other strings", () => {
    const answer = (bucket: string) => JSON.stringify({ data: [{ metric: { nodes: ['n1:8091'], bucket }, values: [[T0, '1']] }], errors: [] });
    // A reader whose guess for the bucket is the number of `old-bucket`, which the interner has since forgotten
    // (two sweeps without asking for it) and given to another string.
    const setup = () => {
      const interner = new Interner();
      const r = new QueryReader(interner);
      r.read(answer('old-bucket'), 0, false);
      const oldId = interner.idOf('old-bucket');
      interner.sweep();
      for (const x of ['nodes', 'bucket', 'n1:8091']) interner.idOf(x);
      interner.sweep();
      let reused = '';
      for (let n = 0; reused === '' && n < 10; n++) if (interner.idOf(`new-${n}`) === oldId) reused = `new-${n}`;
      expect(reused).not.toBe('');
      return { r, reused };
    };
    for (const which of ['old', 'reused', 'other'] as const) {
      const { r, reused } = setup();
      const bucket = which === 'old' ? 'old-bucket' : which === 'reused' ? reused : 'other';
      const text = answer(bucket);
      expect(r.read(text, 0, false)).toBe(text.length);
      expect(r.entries[0]?.labels.bucket).toBe(bucket);
    }
  });

  it.each([
    ['an escape in a label', '{"data":[{"metric":{"bucket":"a\\"b","nodes":["n"]},"values":[]}]}'],
    ['an errors entry whose error is not a string', '{"data":[],"errors":[{"node":"n","error":{"x":1}}]}'],
    ['an errors entry whose node has an escape', '{"data":[],"errors":[{"node":"n\\"1","error":"timeout"}]}'],
    ['an object as a label value', '{"data":[{"metric":{"bucket":{"x":1},"nodes":["n"]},"values":[]}]}'],
    ['a number with a leading zero', '{"data":[{"metric":{"nodes":["n"]},"values":[[01,"1"]]}]}'],
    ['no data', '{"errors":[]}'],
    ['data twice', '{"data":[],"data":[]}'],
    ['a __proto__ key', '{"data":[{"metric":{"__proto__":"x","nodes":["n"]},"values":[]}]}'],
    ['a control character in a string', '{"data":[{"metric":{"bucket":"a\u0001","nodes":["n"]},"values":[]}]}'],
  ])('gives up on %s (JSON.parse then decides)', (_what, text) => {
    expect(reader().read(text, 0, false)).toBe(-1);
  });
});

describe('Interner', () => {
  it('gives each text one string, equal to the text, and the same string again', () => {
    const i = new Interner();
    const text = '"bucket-0042" "bucket-0042" "n1:8091" "ÿ😀"';
    const a = i.get(text, 0, 12);
    expect(a).toBe('bucket-0042');
    expect(i.get(text, 14, 26)).toBe(a);
    expect(i.get(text, 28, 36)).toBe('n1:8091');
    expect(i.get(text, 38, 42)).toBe('ÿ😀');
  });

  it('numbers its strings from 1, the same for the text and for the string', () => {
    const i = new Interner();
    i.get('"a"', 0, 2);
    expect(i.id).toBe(1);
    expect(i.idOf('b')).toBe(2);
    expect(i.idOf('a')).toBe(1);
    i.get('"b"', 0, 2);
    expect(i.id).toBe(2);
  });

  it('idKey: the same labels in any order give one key, another value another; a string without a number gives none', () => {
    const ids = (...xs: number[]) => Int32Array.from(xs);
    const k = idKey(3, 4, ids(5, 6, 7, 8, 9, 10), 0, 6);
    expect(k).toBe(String.fromCharCode(3, 4, 5, 6, 7, 8, 9, 10));
    expect(idKey(3, 4, ids(9, 10, 5, 6, 7, 8), 0, 6)).toBe(k);
    expect(idKey(3, 4, ids(9, 11, 5, 6, 7, 8), 0, 6)).not.toBe(k);
    expect(idKey(3, 5, ids(5, 6, 7, 8, 9, 10), 0, 6)).not.toBe(k);
    expect(idKey(3, 4, ids(0, 0, 5, 6, 7, 8, 9, 10, 0), 2, 8)).toBe(k);
    expect(idKey(3, 4, ids(5, 0), 0, 2)).toBeUndefined();
    expect(idKey(0, 4, ids(), 0, 0)).toBeUndefined();
    expect(k).not.toContain('\u0000');
  });

  it('past its limit in bytes it still gives the right strings (it only stops keeping them)', () => {
    const i = new Interner();
    // `v0`…: 2 to 6 code units, 68 to 76 bytes each as counted: 1 MiB holds fewer than 16,000 of them.
    for (let n = 0; n < 20_000; n++) {
      const text = JSON.stringify(`v${n}`);
      expect(i.get(text, 0, text.length - 1)).toBe(`v${n}`);
    }
    expect(i.bytes).toBeLessThanOrEqual(1 << 20);
    expect(i.size).toBeLessThan(16_000);
    expect(i.get('"v7"', 0, 3)).toBe('v7');
    expect(i.id).toBe(8);
    expect(i.idOf('v19990')).toBe(0);
  });
});

describe('the cells gate', () => {
  // A gate of room 2 that counts each new (bucket, node) once, written here by hand (not the layer's).
  const gate = () => {
    const seen = new Set<string>();
    return { room: 2, fits: (labels: Readonly<Record<string, string>>, node: string) => (seen.add(`${labels.bucket}\u0000${node}`), seen.size <= 2) };
  };
  const text = (buckets: readonly string[]) =>
    `[${JSON.stringify({ data: buckets.map((b) => ({ metric: { nodes: ['n1:8091'], bucket: b }, values: [[T0, '1']] })), errors: [] })}]`;

  it('an answer whose series make more cells than the room is refused as read: no entry kept, every series counted', () => {
    const r = new QueryReader(new Interner());
    const t = text(['a', 'b', 'c', 'd', 'e']);
    expect(r.read(t, 1, false, gate())).toBe(t.length - 1);
    expect(r.entries).toHaveLength(0);
    expect(r.cellRefused).toBe(5);
  });

  it('more series than the room in fewer cells are all kept (the gate counts cells, not series)', () => {
    const r = new QueryReader(new Interner());
    const t = text(['a', 'b', 'a', 'b', 'a']);
    r.read(t, 1, false, gate());
    expect(r.cellRefused).toBe(0);
    // a and b: two cells; their repeats are merged as any repeated series.
    expect(r.entries.map((e) => e.labels.bucket)).toEqual(['a', 'b']);
  });

  it('the next answer read without a gate starts afresh', () => {
    const r = new QueryReader(new Interner());
    r.read(text(['a', 'b', 'c']), 1, false, gate());
    expect(r.cellRefused).toBe(3);
    r.read(text(['a', 'b', 'c']), 1, false);
    expect(r.cellRefused).toBe(0);
    expect(r.entries).toHaveLength(3);
  });
});

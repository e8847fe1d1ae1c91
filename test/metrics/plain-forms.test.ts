/**
 * The HTTP thread keeps collector parts deflated only (src/collection/parts.ts) and inflates them for a scrape
 * without gzip (src/metrics/plain-forms.ts): the text comes back byte for byte, is kept while plain scrapes keep
 * coming, is dropped for a replaced part and after the keep time, and a damaged part fails that scrape alone.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PartRenderer } from '../../src/collection/parts.js';
import { preparePart } from '../../src/metrics/part.js';
import type { PollOutcome } from '../../src/collectors/context.js';
import { defineFamily, SampleSet } from '../../src/metrics/family.js';
import { KEEP_MS, PlainForms } from '../../src/metrics/plain-forms.js';
import { SnapshotStore } from '../../src/metrics/store.js';

const ops = defineFamily('bucket_stats', 'couchbase_bucket_plain_forms_test_ops', 'gauge', 'Ops.', ['bucket', 'stat']);

afterEach(() => {
  vi.useRealTimers();
});

describe('PlainForms', () => {
  it('gives back the text each part was made of, in order, with multi-byte characters intact', async () => {
    const a = 'couchbase_a{bucket="é中😀"} 1\n';
    const b = '# HELP couchbase_b_total B.\n# TYPE couchbase_b_total counter\ncouchbase_b_total 2\n'.repeat(500);
    const forms = new PlainForms();
    const texts = await forms.of([preparePart('a', a), preparePart('b', b)]);
    expect(texts.map((t) => t.toString('utf8'))).toEqual([a, b]);
    forms.clear();
  });

  it('inflates a part once for scrapes that overlap or follow, and drops the text of a part replaced', async () => {
    const forms = new PlainForms();
    const one = preparePart('a', 'x 1\n');
    const two = preparePart('b', 'y 2\n');
    const [first, second] = await Promise.all([forms.of([one, two]), forms.of([one, two])]);
    // The same Buffer objects: one inflate each, shared.
    expect(second?.[0]).toBe(first?.[0]);
    expect(second?.[1]).toBe(first?.[1]);
    expect((await forms.of([one, two]))[0]).toBe(first?.[0]);
    expect(forms.size).toBe(2);
    // A poll replaced `b`: its old text goes, the new one is read.
    const twoAgain = preparePart('b', 'y 3\n');
    const after = await forms.of([one, twoAgain]);
    expect(after[0]).toBe(first?.[0]);
    expect(after[1]?.toString()).toBe('y 3\n');
    expect(forms.size).toBe(2);
    forms.clear();
  });

  it('drops every text KEEP_MS after the last scrape that read it, and keeps it while scrapes come sooner', async () => {
    vi.useFakeTimers();
    const forms = new PlainForms();
    const part = preparePart('a', 'x 1\n');
    await forms.of([part]);
    vi.advanceTimersByTime(KEEP_MS - 1_000);
    expect(forms.size).toBe(1);
    await forms.of([part]); // the keep time starts again
    vi.advanceTimersByTime(KEEP_MS - 1_000);
    expect(forms.size).toBe(1);
    vi.advanceTimersByTime(1_000);
    expect(forms.size).toBe(0);
    expect((await forms.of([part]))[0]?.toString()).toBe('x 1\n');
    forms.clear();
  });

  it('fails the scrape for a damaged part with the reason, keeps nothing of it, and the next scrape tries again', async () => {
    const forms = new PlainForms();
    const good = preparePart('a', 'x 1\n');
    const damaged = { deflated: Buffer.from([0xff, 0xff, 0xff, 0xff]), length: 4 };
    await expect(forms.of([good, damaged])).rejects.toThrow();
    expect(forms.size).toBe(1);
    // A part whose bytes inflate to another length than it says is refused, not served short.
    const short = { deflated: good.deflated, length: 5 };
    await expect(new PlainForms().of([short])).rejects.toThrow('a part inflated to 4 bytes, not the 5 it was made of');
    forms.clear();
  });
});

describe('the parts sent to the HTTP thread', () => {
  it('carry the deflated bytes and the text length, not the text', async () => {
    const store = new SnapshotStore();
    const set = new SampleSet();
    for (let b = 0; b < 200; b++) for (let i = 0; i < 40; i++) set.add(ops, { bucket: `bucket-${b}`, stat: `stat_${i}` }, b * 100 + i);
    const outcome: PollOutcome = { collector: 'bucket_stats', ok: true, set, error: undefined, durationSeconds: 0.01, requests: [], skipped: new Map(), itemErrors: new Map(), notApplicable: undefined, finishedAt: 1_700_000_000_000 };
    store.record('c1', outcome);
    const update = await new PartRenderer(store, { requestMetrics: false }).update();
    const part = update?.parts[0];
    // 8,000 lines of about 75 bytes.
    expect(part?.length).toBeGreaterThan(8_000 * 60);
    const sent = PartRenderer.transferList(update as NonNullable<typeof update>).reduce((n, b) => n + b.byteLength, 0);
    expect(sent).toBe(part?.deflated.buffer.byteLength);
    expect(sent).toBeLessThan((part?.length ?? 0) / 5);
    expect(Object.keys(part ?? {}).sort()).toEqual(['crc', 'deflated', 'length', 'name']);
  });
});

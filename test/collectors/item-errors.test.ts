import { describe, expect, it } from 'vitest';
import { itemErrorReason } from '../../src/collectors/context.js';
import type { PollOutcome } from '../../src/collectors/context.js';
import { AuthError, HttpStatusError, TimeoutError } from '../../src/errors.js';
import { SampleSet } from '../../src/metrics/family.js';
import { SnapshotStore } from '../../src/metrics/store.js';

const req = { method: 'GET', url: 'http://cb:8091/x', endpoint: '/x' };

describe('item errors', () => {
  it('maps error codes to bounded reasons', () => {
    expect(itemErrorReason(new HttpStatusError(req, 500))).toBe('http_5xx');
    expect(itemErrorReason(new HttpStatusError(req, 414))).toBe('http_4xx');
    expect(itemErrorReason(new HttpStatusError(req, 404))).toBe('not_found');
    expect(itemErrorReason(new AuthError(req))).toBe('forbidden');
    expect(itemErrorReason(new TimeoutError(req, 'body'))).toBe('timeout');
    expect(itemErrorReason(new Error('boom'))).toBe('other');
    expect(itemErrorReason(undefined)).toBe('other');
  });

  it('accumulates per reason across polls as a counter, also over a failed poll', () => {
    const store = new SnapshotStore();
    const outcome = (ok: boolean, errs: Array<[string, number]>): PollOutcome => ({
      collector: 'xdcr', ok, set: new SampleSet(), error: ok ? undefined : new Error('x'), durationSeconds: 0.1, requests: [],
      skipped: new Map(), itemErrors: new Map(errs), notApplicable: undefined, finishedAt: 1_700_000_000_000,
    });
    store.register('c1', 'xdcr');
    store.record('c1', outcome(true, [['http_5xx', 2]]));
    store.record('c1', outcome(false, [['timeout', 1]]));
    store.record('c1', outcome(true, [['http_5xx', 1]]));
    const status = store.labelledSets().at(-1)?.set;
    expect(status?.get('cbwatch_collector_item_errors_total', { collector: 'xdcr', reason: 'http_5xx' })).toBe(3);
    expect(status?.get('cbwatch_collector_item_errors_total', { collector: 'xdcr', reason: 'timeout' })).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { requestMetricsText } from '../../src/metrics/requests.js';
import { codeLabel, observeRequest, resetSelf } from '../../src/metrics/self.js';

describe('cbwatch_couchbase_requests_total code label', () => {
  it('keeps usual statuses and failure names, folds invented statuses into their class', () => {
    expect(codeLabel('200')).toBe('200');
    expect(codeLabel('404')).toBe('404');
    expect(codeLabel('503')).toBe('503');
    expect(codeLabel('timeout')).toBe('timeout');
    expect(codeLabel('299')).toBe('2xx');
    expect(codeLabel('418')).toBe('4xx');
    expect(codeLabel('599')).toBe('5xx');
    expect(codeLabel('999')).toBe('other');
  });

  it('a server answering with every status from 100 to 999 adds at most a handful of series per endpoint', () => {
    resetSelf();
    for (let s = 100; s <= 999; s++) observeRequest('c', { endpoint: '/pools/default', method: 'GET', code: String(s), status: s, durationSeconds: 0.001, error: undefined });
    const text = requestMetricsText();
    const series = text.split('\n').filter((l) => l.startsWith('cbwatch_couchbase_requests_total{'));
    // 23 usual codes + 1xx..5xx + other.
    expect(series.length).toBeLessThanOrEqual(23 + 5 + 1);
    resetSelf();
  });
});

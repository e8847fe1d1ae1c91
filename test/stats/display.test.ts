/** The statistics source a poll used is shown on the landing page (the collector's note). */
import { describe, expect, it } from 'vitest';
import { pendingStatus } from '../../src/metrics/store.js';
import { landingPage } from '../../src/server/landing.js';

describe('landing page', () => {
  it("shows a successful poll's note (the statistics source and why)", () => {
    const st = { ...pendingStatus('prod', 'bucket_stats'), ok: true, lastSuccessAt: 1, note: 'statistics: range (auto: cluster 7.6)' };
    const html = landingPage({ version: 'x', statuses: [st], clusters: [{ name: 'prod', url: 'http://cb:8091' }], webhooks: false, now: 2 });
    expect(html).toContain('<td>statistics: range (auto: cluster 7.6)</td>');
  });
  it('an error still wins over the note', () => {
    const st = { ...pendingStatus('prod', 'xdcr'), ok: false, lastError: 'boom', note: 'statistics: envelope' };
    const html = landingPage({ version: 'x', statuses: [st], clusters: [], webhooks: false, now: 2 });
    expect(html).toContain('<td>boom</td>');
    expect(html).not.toContain('statistics: envelope');
  });
});

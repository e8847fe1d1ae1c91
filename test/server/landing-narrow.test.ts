/**
 * Issue 38, item 6: the landing page does not scroll sideways on a 390 px phone, even with long unbroken text
 * (a failing collector's error with its URL, a long cluster URL, a long name in a problem). Measured by headless
 * Chromium (Debian's /usr/bin/chromium): the page is laid out in a 390 px wide frame and its document's
 * scrollWidth must not exceed its width. The collectors' table may scroll inside itself (overflow-x), not the page.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CollectorStatus } from '../../src/metrics/store.js';
import { landingPage } from '../../src/server/landing.js';

const CHROMIUM = '/usr/bin/chromium';
const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const WIDTH = 390;

const longUrl = `https://cb-node-with-a-rather-long-name-01.eu-west-3.compute.internal.example.com:18091/pools/default/buckets/${'travel-sample-'.repeat(6)}/stats?zoom=minute&haveTStamp=1732795200000`;

function page(): string {
  const status = (over: Partial<CollectorStatus>): CollectorStatus =>
    ({ cluster: 'prod-eu', collector: 'nodes', ok: true, series: 10, requests: 1, lastSuccessAt: NOW - 5000, lastDurationSeconds: 0.1, skipped: new Map(), itemErrors: new Map(), droppedValues: new Map(), ...over }) as unknown as CollectorStatus;
  return landingPage({
    version: '0.1.0',
    statuses: [
      status({ collector: 'bucket_stats', ok: false, lastError: `CBW_ERR_TIMEOUT: GET ${longUrl} timed out after 10s (connect ETIMEDOUT 10.0.0.1:18091)` }),
      status({ collector: 'nodes' }),
    ],
    clusters: [{ name: 'prod-eu', url: longUrl.slice(0, 90) }],
    webhooks: true,
    now: NOW,
    problems: [
      { cluster: 'prod-eu', severity: 'warning', text: `Couchbase: ${longUrl} answered 500 for the bucket ${'x'.repeat(120)}`, alert: 'CouchbaseClusterAlertRaised' },
      { cluster: 'prod-eu', severity: 'info', text: 'the web console is served over plain http', alert: 'CouchbaseUiOverHttpEnabled' },
    ],
    telemetryPath: '/metrics',
  });
}

/** The page's scrollWidth and width in a WIDTH px frame, as Chromium lays it out. */
function measure(html: string): { scrollWidth: number; clientWidth: number } {
  const dir = mkdtempSync(join(tmpdir(), 'cbw-landing-narrow-'));
  writeFileSync(join(dir, 'landing.html'), html);
  // Headless Chromium keeps its window at least 500 px wide: a frame of WIDTH px is the phone's viewport (its media
  // queries and the viewport tag see WIDTH).
  writeFileSync(
    join(dir, 'frame.html'),
    `<!doctype html><html><body style="margin:0"><iframe id="f" src="landing.html" width="${WIDTH}" height="844" style="border:0"></iframe>` +
      `<script>addEventListener('load', () => { const d = document.getElementById('f').contentDocument.documentElement; document.body.dataset.measured = d.scrollWidth + ' ' + d.clientWidth; });</script></body></html>`,
  );
  const dom = execFileSync(
    CHROMIUM,
    ['--headless', '--no-sandbox', '--disable-gpu', '--allow-file-access-from-files', '--window-size=800,900', '--virtual-time-budget=5000', '--dump-dom', `file://${join(dir, 'frame.html')}`],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 60_000, env: { ...process.env, HOME: dir } },
  );
  const m = /data-measured="(\d+) (\d+)"/.exec(dom);
  if (!m) throw new Error(`Chromium gave no measure:\n${dom.slice(0, 2000)}`);
  return { scrollWidth: Number(m[1]), clientWidth: Number(m[2]) };
}

describe('landing page on a 390 px screen', () => {
  it.skipIf(!existsSync(CHROMIUM))('wraps long text: no sideways scrolling (headless Chromium; skipped when /usr/bin/chromium is absent)', () => {
    const html = page();
    expect(html).toContain(longUrl.slice(0, 60));
    const { scrollWidth, clientWidth } = measure(html);
    // The frame's width, less a vertical scrollbar where Chromium draws one.
    expect(clientWidth).toBeGreaterThan(WIDTH - 20);
    expect(clientWidth).toBeLessThanOrEqual(WIDTH);
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
    // The oracle bites: the same page without the wrapping rule scrolls sideways.
    const unwrapped = measure(html.replace('overflow-wrap:anywhere}', '}'));
    expect(unwrapped.scrollWidth).toBeGreaterThan(unwrapped.clientWidth);
  }, 120_000);
});

/**
 * A collector's `schedule` and `timezone` (issue 38) as the configuration resolves and prints them: the poll's
 * deadline, no interval check, and `--config.check`'s line with the next slot (2026-11-28 12:00 UTC is the
 * system clock here; 03:00 in Paris is 02:00 UTC in November).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { parseArgs } from '../../src/config/flags.js';
import { describeConfig, loadConfig } from '../../src/config/load.js';

const dir = mkdtempSync(join(tmpdir(), 'cbwatch-schedule-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

function load(collectors: string) {
  const file = join(dir, 'c.yml');
  writeFileSync(file, `clusters:\n  - name: prod\n    url: http://cb1.example.com:8091\n    collectors:\n${collectors}\n`);
  return loadConfig(parseArgs(['--config', file]).flags, {});
}

describe('schedule', () => {
  it('resolves with the default interval\'s deadline, or the one given even past the default interval', () => {
    const c = load('      backup: { schedule: "0 3 * * *", timezone: Europe/Paris }\n      collections: { schedule: "30 2 * * *", timeout: 10m }');
    const backup = c.clusters[0]?.collectors.backup;
    expect(backup).toMatchObject({ schedule: '0 3 * * *', timezone: 'Europe/Paris', timeout: 120_000 });
    expect(c.clusters[0]?.collectors.collections).toMatchObject({ schedule: '30 2 * * *', timeout: 600_000 });
    expect(c.clusters[0]?.collectors.nodes.schedule).toBeUndefined();
  });

  it('--config.check prints the schedule, its zone and the next slot', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse('2026-11-28T12:00:00Z'));
    const text = describeConfig(load('      backup: { schedule: "0 3 * * *", timezone: Europe/Paris }\n      search: { cancel: { enabled: true, active: "* 9-17 * * 1-5", timezone: UTC } }'));
    expect(text).toContain('      backup        at "0 3 * * *" (Europe/Paris), next 2026-11-29 03:00 +01:00, and once at start, timeout 2m\n');
    expect(text).toContain('cancel.active=* 9-17 * * 1-5');
    expect(text).toContain('cancel.timezone=UTC');
    expect(text).toContain('      nodes         every 30s, timeout 29.5s\n');
  });
});

describe('where schedules show', () => {
  it('`cbwatch check` says when the daemon would poll a scheduled collector', async () => {
    const { scheduleLines } = await import('../../src/check.js');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse('2026-11-28T12:00:00Z'));
    const lines = scheduleLines(load('      backup: { schedule: "0 3 * * *", timezone: Europe/Paris }'));
    expect(lines).toEqual(['prod backup: polled now by check; the daemon polls it at "0 3 * * *" (Europe/Paris), next 2026-11-29 03:00 +01:00']);
  });

  it('the landing page lists how each collector polls: its interval, or its schedule and next slot', async () => {
    const { landingPage } = await import('../../src/server/landing.js');
    const { pendingStatus } = await import('../../src/metrics/store.js');
    const html = landingPage({
      version: '1',
      clusters: [],
      webhooks: false,
      now: Date.parse('2026-11-28T12:00:00Z'),
      statuses: [
        { ...pendingStatus('prod', 'nodes'), intervalSeconds: 30 },
        { ...pendingStatus('prod', 'backup'), schedule: { expression: '0 3 * * *', timezone: 'Europe/Paris' }, nextSlotAt: Date.parse('2026-11-29T02:00:00Z') },
      ],
    });
    expect(html).toContain('<th>polls</th>');
    expect(html).toContain('<td>nodes</td><td>every 30s</td>');
    expect(html).toContain('<td>backup</td><td>at &quot;0 3 * * *&quot; (Europe/Paris), next 2026-11-29 03:00 +01:00</td>');
  });
});

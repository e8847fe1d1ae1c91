/**
 * The Search cancel policy's cron windows (issue 38): `active` (the policy acts only in a minute it matches) and
 * `inactive` (never in a minute it matches), in the policy's time zone. Instants picked by hand: Monday
 * 2026-11-30, Paris at UTC+1, New York at UTC-5.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { applyCancelPolicy, cancelCandidates, cancelWindowOpen } from '../../src/collectors/search.js';
import type { CancelPolicy, SearchQuery } from '../../src/collectors/search.js';
import { collectorSchemas } from '../../src/config/schema.js';
import { fakeClient } from '../helpers/collect.js';

const at = (iso: string): number => Date.parse(iso);
const policy = (p: Partial<CancelPolicy> = {}): CancelPolicy => ({ enabled: true, longer_than: 5000, indexes: [], dry_run: true, log_query_text: false, ...p });
const runaway: SearchQuery = { key: 'n-7', node: 'n', id: '7', index: 'idx', seconds: 600, query: {} };

describe('cancel windows', () => {
  it('no window: always open', () => {
    expect(cancelWindowOpen({}, at('2026-11-30T03:00:00Z'))).toBe(true);
  });

  it('active in business hours, Paris: from 09:00:00 to 17:59:59 local on weekdays', () => {
    const p = { active: '* 9-17 * * 1-5', timezone: 'Europe/Paris' };
    expect(cancelWindowOpen(p, at('2026-11-30T07:59:59Z'))).toBe(false);
    expect(cancelWindowOpen(p, at('2026-11-30T08:00:00Z'))).toBe(true);
    expect(cancelWindowOpen(p, at('2026-11-30T16:59:59Z'))).toBe(true);
    expect(cancelWindowOpen(p, at('2026-11-30T17:00:00Z'))).toBe(false);
    // The same instant, New York business hours: 03:00 there.
    expect(cancelWindowOpen({ ...p, timezone: 'America/New_York' }, at('2026-11-30T08:00:00Z'))).toBe(false);
    expect(cancelWindowOpen({ ...p, timezone: 'America/New_York' }, at('2026-11-30T14:00:00Z'))).toBe(true);
  });

  it('never during the nightly batch (01:00 to 04:59 UTC)', () => {
    const p = { inactive: '* 1-4 * * *', timezone: 'UTC' };
    expect(cancelWindowOpen(p, at('2026-11-30T00:59:59Z'))).toBe(true);
    expect(cancelWindowOpen(p, at('2026-11-30T01:00:00Z'))).toBe(false);
    expect(cancelWindowOpen(p, at('2026-11-30T04:59:59Z'))).toBe(false);
    expect(cancelWindowOpen(p, at('2026-11-30T05:00:00Z'))).toBe(true);
  });

  it('both: business hours except the lunch hour', () => {
    const p = { active: '* 9-17 * * 1-5', inactive: '* 12 * * *', timezone: 'UTC' };
    expect(cancelWindowOpen(p, at('2026-11-30T11:59:00Z'))).toBe(true);
    expect(cancelWindowOpen(p, at('2026-11-30T12:30:00Z'))).toBe(false);
    expect(cancelWindowOpen(p, at('2026-11-30T13:00:00Z'))).toBe(true);
  });

  it('outside the window no query is a candidate; inside, the runaway is', () => {
    const p = policy({ active: '* 9-17 * * 1-5', timezone: 'UTC' });
    expect(cancelCandidates([runaway], p, new Set(), at('2026-11-30T08:59:00Z'))).toEqual([]);
    expect(cancelCandidates([runaway], p, new Set(), at('2026-11-30T09:00:00Z')).map((q) => q.key)).toEqual(['n-7']);
  });

  it('a runaway seen outside the window is not remembered: the first poll inside acts on it', async () => {
    const state = new Map<string, unknown>();
    const deps = { client: fakeClient({}), baseUrl: 'http://cb.test:8094', log: pino({ level: 'silent' }), state, skip: () => undefined };
    const p = policy({ inactive: '* 1-4 * * *', timezone: 'UTC' });
    await applyCancelPolicy(deps, [runaway], p, at('2026-11-30T04:59:00Z'));
    expect(state.get('cancel.counts')).toEqual(new Map());
    await applyCancelPolicy(deps, [runaway], p, at('2026-11-30T05:00:00Z'));
    expect(state.get('cancel.counts')).toEqual(new Map([['idx\u0000dry_run', 1]]));
  });

  it('the configuration takes the windows and a zone; a zone without a window is refused', () => {
    const ok = collectorSchemas.search.parse({ cancel: { enabled: true, active: '* 9-17 * * 1-5', timezone: 'Europe/Paris' } });
    expect(ok.cancel).toMatchObject({ active: '* 9-17 * * 1-5', timezone: 'Europe/Paris' });
    const bad = collectorSchemas.search.safeParse({ cancel: { enabled: true, timezone: 'UTC' } });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain('a time zone only applies to an active or inactive window');
  });
});

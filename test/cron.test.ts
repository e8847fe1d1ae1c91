/**
 * Cron expressions as cbwatch reads them (src/cron.ts, through node-cron): what a window is (every minute the
 * expression matches, in its zone), which expressions and zones are refused, and the next slot. The instants are
 * picked by hand, with their local times worked out from the zones' published offsets (Paris UTC+1 in winter and
 * UTC+2 in summer, New York UTC-5/-4, Kolkata UTC+5:30); 2026-11-28 is a Saturday, 2026-11-30 a Monday.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CronSpec, cronExpressionProblem, formatSlot, minuteOf, timeZoneProblem } from '../src/cron.js';

const at = (iso: string): number => Date.parse(iso);

function open(expression: string, timezone: string | undefined, iso: string): boolean {
  const spec = new CronSpec(expression, timezone);
  try {
    return spec.activeAt(at(iso));
  } finally {
    spec.dispose();
  }
}

describe('a cron window: open for the whole of every minute the expression matches', () => {
  const business = '* 9-17 * * 1-5';

  it('business hours in Paris (winter, UTC+1): 09:00:00 to 17:59:59 local on a weekday', () => {
    expect(open(business, 'Europe/Paris', '2026-11-30T07:59:59.999Z')).toBe(false); // 08:59:59 local
    expect(open(business, 'Europe/Paris', '2026-11-30T08:00:00.000Z')).toBe(true); // 09:00:00
    expect(open(business, 'Europe/Paris', '2026-11-30T08:00:59.999Z')).toBe(true); // the whole first minute
    expect(open(business, 'Europe/Paris', '2026-11-30T16:59:59.999Z')).toBe(true); // 17:59:59
    expect(open(business, 'Europe/Paris', '2026-11-30T17:00:00.000Z')).toBe(false); // 18:00
    expect(open(business, 'Europe/Paris', '2026-11-28T10:00:00.000Z')).toBe(false); // Saturday 11:00
  });

  it('the same expression in summer time follows the zone (Paris UTC+2 on Monday 2026-07-06)', () => {
    expect(open(business, 'Europe/Paris', '2026-07-06T06:59:00Z')).toBe(false); // 08:59 local
    expect(open(business, 'Europe/Paris', '2026-07-06T07:00:00Z')).toBe(true); // 09:00
    expect(open(business, 'Europe/Paris', '2026-07-06T15:59:00Z')).toBe(true); // 17:59
    expect(open(business, 'Europe/Paris', '2026-07-06T16:00:00Z')).toBe(false); // 18:00
  });

  it('one instant, three zones: Monday 08:30 UTC is 03:30 in New York, 09:30 in Paris, 14:00 in Kolkata', () => {
    expect(open(business, 'America/New_York', '2026-11-30T08:30:00Z')).toBe(false);
    expect(open(business, 'Europe/Paris', '2026-11-30T08:30:00Z')).toBe(true);
    expect(open(business, 'Asia/Kolkata', '2026-11-30T08:30:00Z')).toBe(true);
    expect(open(business, 'UTC', '2026-11-30T08:30:00Z')).toBe(false);
  });

  it('a half-hour zone: 09:00 in Kolkata starts at 03:30 UTC', () => {
    expect(open('* 9 * * *', 'Asia/Kolkata', '2026-11-30T03:29:59Z')).toBe(false);
    expect(open('* 9 * * *', 'Asia/Kolkata', '2026-11-30T03:30:00Z')).toBe(true);
    expect(open('* 9 * * *', 'Asia/Kolkata', '2026-11-30T04:29:59Z')).toBe(true);
    expect(open('* 9 * * *', 'Asia/Kolkata', '2026-11-30T04:30:00Z')).toBe(false);
  });

  it('the hour that repeats when New York leaves summer time (2026-11-01) matches both times', () => {
    expect(open('* 1 * * *', 'America/New_York', '2026-11-01T05:30:00Z')).toBe(true); // 01:30 EDT
    expect(open('* 1 * * *', 'America/New_York', '2026-11-01T06:30:00Z')).toBe(true); // 01:30 EST
    expect(open('* 1 * * *', 'America/New_York', '2026-11-01T07:30:00Z')).toBe(false); // 02:30 EST
  });

  it('a nightly batch window (01:00 to 04:59 UTC)', () => {
    const batch = '* 1-4 * * *';
    expect(open(batch, 'UTC', '2026-11-30T00:59:59Z')).toBe(false);
    expect(open(batch, 'UTC', '2026-11-30T01:00:00Z')).toBe(true);
    expect(open(batch, 'UTC', '2026-11-30T04:59:59Z')).toBe(true);
    expect(open(batch, 'UTC', '2026-11-30T05:00:00Z')).toBe(false);
  });

  it('a single minute: "30 2 * * *" is open from 02:30:00 to 02:30:59 only', () => {
    expect(open('30 2 * * *', 'UTC', '2026-11-30T02:29:59Z')).toBe(false);
    expect(open('30 2 * * *', 'UTC', '2026-11-30T02:30:00Z')).toBe(true);
    expect(open('30 2 * * *', 'UTC', '2026-11-30T02:30:59.999Z')).toBe(true);
    expect(open('30 2 * * *', 'UTC', '2026-11-30T02:31:00Z')).toBe(false);
  });

  it('minuteOf is the start of the minute', () => {
    expect(minuteOf(at('2026-11-30T02:30:59.999Z'))).toBe(at('2026-11-30T02:30:00Z'));
  });
});

describe('what is refused', () => {
  it.each([
    ['0 3 * *', 'expected 5 fields'],
    ['0 0 3 * * *', 'expected 5 fields'],
    ['', 'expected 5 fields'],
    ['0 25 * * *', '25 is not valid for the hour'],
    ['61 * * * *', '61 is not valid for the minute'],
    ['* * * * 9', 'not valid'],
  ])('%j', (expression, fragment) => {
    expect(cronExpressionProblem(expression)).toContain(fragment);
    expect(() => new CronSpec(expression, undefined)).toThrow(RangeError);
  });

  it('takes the forms an operator writes', () => {
    for (const e of ['0 3 * * *', '*/15 * * * *', '0 9-17 * * 1-5', '0 0 1 * *', '0 3 * * sun']) expect(cronExpressionProblem(e), e).toBeUndefined();
  });

  it('time zones: IANA names this Node knows', () => {
    expect(timeZoneProblem('Europe/Paris')).toBeUndefined();
    expect(timeZoneProblem('UTC')).toBeUndefined();
    expect(timeZoneProblem('Europe/Pariss')).toContain('unknown time zone "Europe/Pariss"');
    expect(() => new CronSpec('0 3 * * *', 'Mars/Olympus')).toThrow('unknown time zone');
  });
});

describe('the next slot', () => {
  afterEach(() => vi.useRealTimers());

  it('is the first matching minute strictly after the system clock, in the zone', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(at('2026-11-28T12:00:00Z'));
    const paris = new CronSpec('0 3 * * *', 'Europe/Paris');
    const utc = new CronSpec('0 3 * * *', 'UTC');
    try {
      expect(new Date(paris.nextSlot()).toISOString()).toBe('2026-11-29T02:00:00.000Z');
      expect(new Date(utc.nextSlot()).toISOString()).toBe('2026-11-29T03:00:00.000Z');
      // Exactly at a slot, the next one is the following day's.
      vi.setSystemTime(at('2026-11-29T03:00:00Z'));
      expect(new Date(utc.nextSlot()).toISOString()).toBe('2026-11-30T03:00:00.000Z');
    } finally {
      paris.dispose();
      utc.dispose();
    }
  });

  it('node-cron only matches: a spec arms no timer of its own', () => {
    vi.useFakeTimers();
    const spec = new CronSpec('* * * * *', 'UTC');
    try {
      spec.nextSlot();
      spec.activeAt(Date.now());
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      spec.dispose();
    }
  });

  it('is written in its zone with the offset', () => {
    expect(formatSlot(at('2026-11-29T02:00:00Z'), 'Europe/Paris')).toBe('2026-11-29 03:00 +01:00');
    expect(formatSlot(at('2026-11-29T03:00:00Z'), 'UTC')).toBe('2026-11-29 03:00 +00:00');
    expect(formatSlot(at('2026-11-29T03:00:00Z'), 'Asia/Kolkata')).toBe('2026-11-29 08:30 +05:30');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, parseSize } from '../../src/config/units.js';

describe('durations', () => {
  it.each([
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    ['1.5s', 1500],
    ['2d', 172_800_000],
    [' 10s ', 10_000],
  ])('parses %j', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['10x', '', '5', 's', '-5s', '1h 30m', '1e3s', 'soon'])('rejects %j', (text) => expect(parseDuration(text)).toBeUndefined());

  it.each([
    [0, '0s'],
    [250, '250ms'],
    [1000, '1s'],
    [29_500, '29.5s'],
    [90_000, '1m30s'],
    [3_600_000, '1h'],
    [86_400_000 + 60_000, '1d1m'],
  ])('formats %d ms as %j', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it('parse(format(ms)) is the identity for whole milliseconds', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10 * 86_400_000 }), (ms) => parseDuration(formatDuration(ms)) === ms));
  });
});

describe('sizes', () => {
  it.each([
    ['1048576', 1_048_576],
    ['64MiB', 64 * 1024 ** 2],
    ['1 GiB', 1024 ** 3],
    ['10KB', 10_000],
  ])('parses %j', (text, n) => expect(parseSize(text)).toBe(n));
  it.each(['64 parsecs', 'MiB', '-1', ''])('rejects %j', (text) => expect(parseSize(text)).toBeUndefined());
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatGoDuration, GoDurationError, parseGoDuration, parseGoDurationNs, tryParseGoDuration } from '../../src/couchbase/goduration.js';

const NS = 1n;
const US = 1000n;
const MS = 1_000_000n;
const S = 1_000_000_000n;
const M = 60n * S;
const H = 60n * M;
const MAX = (1n << 63n) - 1n;
const MIN = -(1n << 63n);

const UNITS: ReadonlyArray<[string, bigint]> = [
  ['ns', NS],
  ['us', US],
  ['\u00b5s', US],
  ['\u03bcs', US],
  ['ms', MS],
  ['s', S],
  ['m', M],
  ['h', H],
];

// Go's own table (src/time/time_test.go, parseDurationTests), as nanoseconds.
const GO_CASES: ReadonlyArray<[string, bigint]> = [
  ['0', 0n],
  ['5s', 5n * S],
  ['30s', 30n * S],
  ['1478s', 1478n * S],
  ['-5s', -5n * S],
  ['+5s', 5n * S],
  ['-0', 0n],
  ['+0', 0n],
  ['5.0s', 5n * S],
  ['5.6s', 5n * S + 600n * MS],
  ['5.s', 5n * S],
  ['.5s', 500n * MS],
  ['1.0s', S],
  ['1.00s', S],
  ['1.004s', S + 4n * MS],
  ['1.0040s', S + 4n * MS],
  ['100.00100s', 100n * S + 1n * MS],
  ['10ns', 10n],
  ['11us', 11n * US],
  ['12\u00b5s', 12n * US],
  ['12\u03bcs', 12n * US],
  ['13ms', 13n * MS],
  ['14s', 14n * S],
  ['15m', 15n * M],
  ['16h', 16n * H],
  ['3h30m', 3n * H + 30n * M],
  ['10.5s4m', 4n * M + 10n * S + 500n * MS],
  ['-2m3.4s', -(2n * M + 3n * S + 400n * MS)],
  ['1h2m3s4ms5us6ns', H + 2n * M + 3n * S + 4n * MS + 5n * US + 6n],
  ['39h9m14.425s', 39n * H + 9n * M + 14n * S + 425n * MS],
  ['52763797000ns', 52763797000n],
  ['0.3333333333333333333h', 20n * M],
  ['9007199254740993ns', (1n << 53n) + 1n],
  ['9223372036854775807ns', MAX],
  ['9223372036854775.807us', MAX],
  ['9223372036s854ms775us807ns', MAX],
  ['-9223372036854775808ns', MIN],
  ['-9223372036854775.808us', MIN],
  ['-9223372036s854ms775us808ns', MIN],
  ['-9223372036854775808ns', MIN],
  ['-2562047h47m16.854775808s', MIN],
  ['0.100000000000000000000h', 6n * M],
  ['0.830103483285477580700h', 49n * M + 48n * S + 372539827n],
];

const GO_ERRORS = ['', '3', '-', 's', '.', '-.', '.s', '+.s', '1d', '\u0085\u0085', '\u00ffff', 'hello \u00ffff world', '9223372036854775808ns', '9223372036854775.808us', '9223372036s854ms775us808ns', '-9223372036854775809ns', '721664h840391h999993h0ns', '1.5', '1s1', ' 1s', '1s ', '1 s', '1S', '1sec', '--1s', '+-1s', '1e3s', '0x10s', 'NaN', 'Infinity', '∞s'];

describe('parseGoDuration: Go examples', () => {
  it.each(GO_CASES)('%s', (text, ns) => {
    expect(parseGoDurationNs(text)).toBe(ns);
  });
  it.each(GO_ERRORS)('rejects %j', (text) => {
    expect(() => parseGoDurationNs(text)).toThrow(GoDurationError);
    expect(tryParseGoDuration(text)).toBeUndefined();
  });
  it('names the failure like Go', () => {
    expect(() => parseGoDurationNs('3')).toThrow('time: missing unit in duration "3"');
    expect(() => parseGoDurationNs('1d')).toThrow('time: unknown unit "d" in duration "1d"');
    expect(() => parseGoDurationNs('')).toThrow('time: invalid duration ""');
  });
  it('returns seconds', () => {
    expect(parseGoDuration('9.700851426s')).toBe(9.700851426);
    expect(parseGoDuration('-1.5h')).toBe(-5400);
    expect(parseGoDuration('2h45m')).toBe(9900);
    expect(parseGoDuration('1ms')).toBe(0.001);
  });
});

describe('formatGoDuration: Go examples', () => {
  it.each([
    [0n, '0s'],
    [1n, '1ns'],
    [1100n, '1.1\u00b5s'],
    [2200n * US, '2.2ms'],
    [3300n * MS, '3.3s'],
    [4n * M + 5n * S, '4m5s'],
    [4n * M + 5001n * MS, '4m5.001s'],
    [5n * H + 6n * M + 7001n * MS, '5h6m7.001s'],
    [8n * M + 1n, '8m0.000000001s'],
    [MAX, '2562047h47m16.854775807s'],
    [MIN, '-2562047h47m16.854775808s'],
    [-S, '-1s'],
  ])('%s → %s', (ns, text) => {
    expect(formatGoDuration(ns)).toBe(text);
  });
});

const int64 = fc.bigInt({ min: MIN, max: MAX });
// Components small enough that a compound of up to 6 never overflows int64: int64 nanoseconds hold
// 2,562,047 h, and 6 × 400,000 h stays below that. (999,999 per component did not, and failed now and then.)
const component = fc.tuple(fc.bigInt({ min: 0n, max: 400_000n }), fc.constantFrom(...UNITS));

describe('parseGoDuration: properties', () => {
  it('parses every formatted int64 back to itself', () => {
    fc.assert(
      fc.property(int64, (ns) => {
        expect(parseGoDurationNs(formatGoDuration(ns))).toBe(ns);
      }),
      { numRuns: 2000 },
    );
  });

  it('a compound is the sum of its components', () => {
    fc.assert(
      fc.property(fc.array(component, { minLength: 1, maxLength: 6 }), (parts) => {
        const text = parts.map(([v, [u]]) => `${v}${u}`).join('');
        const sum = parts.reduce((acc, [v, [, unit]]) => acc + v * unit, 0n);
        expect(parseGoDurationNs(text)).toBe(sum);
      }),
    );
  });

  it('fractions are exact when the unit is divisible by the fraction scale', () => {
    const exact = fc
      .tuple(fc.constantFrom(...UNITS.filter(([, u]) => u >= US)), fc.bigInt({ min: 0n, max: 99_999n }), fc.integer({ min: 1, max: 9 }))
      .filter(([[, unit], , digits]) => unit % 10n ** BigInt(digits) === 0n)
      .chain(([u, whole, digits]) => fc.tuple(fc.constant(u), fc.constant(whole), fc.constant(digits), fc.bigInt({ min: 0n, max: 10n ** BigInt(digits) - 1n })));
    fc.assert(
      fc.property(exact, ([[name, unit], whole, digits, frac]) => {
        const text = `${whole}.${frac.toString().padStart(digits, '0')}${name}`;
        expect(parseGoDurationNs(text)).toBe(whole * unit + frac * (unit / 10n ** BigInt(digits)));
      }),
    );
  });

  it('a leading - negates and a leading + changes nothing', () => {
    fc.assert(
      fc.property(fc.array(component, { minLength: 1, maxLength: 6 }), (parts) => {
        const text = parts.map(([v, [u]]) => `${v}${u}`).join('');
        const v = parseGoDurationNs(text);
        expect(parseGoDurationNs(`-${text}`)).toBe(-v);
        expect(parseGoDurationNs(`+${text}`)).toBe(v);
        // `+ 0` folds -0 into 0: a zero duration has no sign.
        expect(parseGoDuration(`-${text}`) + 0).toBe(-parseGoDuration(text) + 0);
      }),
    );
  });

  // What Go accepts, written as a regular expression (numbers kept short so overflow cannot occur).
  const GRAMMAR = /^[-+]?(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)$/;
  const alphabet = fc.constantFrom('0', '1', '7', '9', '.', '-', '+', 'n', 's', 'u', '\u00b5', '\u03bc', 'm', 'h', 'd', 'x', ' ', 'S', 'e');

  it('accepts exactly the strings of the grammar and rejects random garbage', () => {
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 12 }).map((cs) => cs.join('')), (text) => {
        const ok = tryParseGoDuration(text) !== undefined;
        expect(ok).toBe(GRAMMAR.test(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('rejects arbitrary unicode strings that are not durations', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 20 }), (text) => {
        fc.pre(!GRAMMAR.test(text));
        expect(() => parseGoDurationNs(text)).toThrow(GoDurationError);
      }),
    );
  });

  it('never returns a value outside int64', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('9', '2', '.', 'h', 'ns', '0'), { maxLength: 30 }).map((cs) => cs.join('')), (text) => {
        const v = (() => {
          try {
            return parseGoDurationNs(text);
          } catch {
            return undefined;
          }
        })();
        if (v !== undefined) expect(v >= MIN && v <= MAX).toBe(true);
      }),
    );
  });
});

/**
 * Go's `time.ParseDuration`, exactly: the Search service writes `executionTime` and echoes `longerThan`
 * in Go's format (`9.700851426s`, `2h45m0s`, `1.5µs`). Arithmetic is done in integer nanoseconds (BigInt)
 * with Go's int64 overflow rules, and fractions go through float64 as Go does, so that every string Go
 * accepts gives the same nanosecond count and every string Go rejects is rejected here.
 *
 * `formatGoDuration` is Go's `Duration.String()`, used by the simulator and by the property tests.
 */

const NS = 1n;
const US = 1000n * NS;
const MS = 1000n * US;
const SEC = 1000n * MS;
const MIN = 60n * SEC;
const HOUR = 60n * MIN;

/** Go's unit table: `µs` is U+00B5 (micro sign) and `μs` U+03BC (Greek mu); both are accepted. */
const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', NS],
  ['us', US],
  ['\u00b5s', US],
  ['\u03bcs', US],
  ['ms', MS],
  ['s', SEC],
  ['m', MIN],
  ['h', HOUR],
]);

const TWO63 = 1n << 63n;
const MAX_INT64 = TWO63 - 1n;

export class GoDurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GoDurationError';
  }
}

const quote = (s: string): string => JSON.stringify(s);
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** Consume [0-9]*; overflow past 2^63 is an error (as in Go's leadingInt). */
function leadingInt(s: string, i: number): { x: bigint; next: number } | undefined {
  let x = 0n;
  let j = i;
  for (; j < s.length && isDigit(s[j]); j++) {
    if (x > TWO63 / 10n) return undefined;
    x = x * 10n + BigInt(s.charCodeAt(j) - 48);
    if (x > TWO63) return undefined;
  }
  return { x, next: j };
}

/** Consume [0-9]* after the point; past int64 precision the digits are ignored, as in Go's leadingFraction. */
function leadingFraction(s: string, i: number): { f: bigint; scale: number; next: number } {
  let f = 0n;
  let scale = 1;
  let overflow = false;
  let j = i;
  for (; j < s.length && isDigit(s[j]); j++) {
    if (overflow) continue;
    if (f > MAX_INT64 / 10n) {
      overflow = true;
      continue;
    }
    const y = f * 10n + BigInt(s.charCodeAt(j) - 48);
    if (y > TWO63) {
      overflow = true;
      continue;
    }
    f = y;
    scale *= 10;
  }
  return { f, scale, next: j };
}

/** Parse to integer nanoseconds (an int64 value, as a BigInt). Throws GoDurationError like Go's errors. */
export function parseGoDurationNs(orig: string): bigint {
  const invalid = (): GoDurationError => new GoDurationError(`time: invalid duration ${quote(orig)}`);
  let s = orig;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  // Go's special case: a bare "0" (with or without sign) needs no unit.
  if (s === '0') return 0n;
  if (s === '') throw invalid();
  let d = 0n;
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (!(c === '.' || isDigit(c))) throw invalid();
    const int = leadingInt(s, i);
    if (int === undefined) throw invalid();
    const pre = int.next !== i;
    let v = int.x;
    i = int.next;
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s[i] === '.') {
      i++;
      const frac = leadingFraction(s, i);
      post = frac.next !== i;
      f = frac.f;
      scale = frac.scale;
      i = frac.next;
    }
    // No digits at all, e.g. ".s" or "-.s".
    if (!pre && !post) throw invalid();
    let j = i;
    while (j < s.length && !(s[j] === '.' || isDigit(s[j]))) j++;
    if (j === i) throw new GoDurationError(`time: missing unit in duration ${quote(orig)}`);
    const u = s.slice(i, j);
    i = j;
    const unit = UNITS.get(u);
    if (unit === undefined) throw new GoDurationError(`time: unknown unit ${quote(u)} in duration ${quote(orig)}`);
    if (v > TWO63 / unit) throw invalid();
    v *= unit;
    if (f > 0n) {
      // Go computes the fraction in float64 (nanosecond-accurate even for fractions of hours) and truncates.
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > TWO63) throw invalid();
    }
    d += v;
    if (d > TWO63) throw invalid();
  }
  if (neg) return -d;
  if (d > MAX_INT64) throw invalid();
  return d;
}

/** Parse to seconds (a float; exact to the nanosecond for durations under about 104 days). */
export function parseGoDuration(s: string): number {
  return Number(parseGoDurationNs(s)) / 1e9;
}

/** Seconds, or undefined when the text is not a Go duration. */
export function tryParseGoDuration(s: string): number | undefined {
  try {
    return parseGoDuration(s);
  } catch (err) {
    if (err instanceof GoDurationError) return undefined;
    throw err;
  }
}

/** The fraction v / 10^prec as ".123" without trailing zeros ('' when it is zero); returns the integer part. */
function fmtFrac(v: bigint, prec: number): { text: string; rest: bigint } {
  let digits = '';
  let printed = false;
  let rest = v;
  for (let i = 0; i < prec; i++) {
    const digit = rest % 10n;
    printed ||= digit !== 0n;
    if (printed) digits = String(digit) + digits;
    rest /= 10n;
  }
  return { text: printed ? `.${digits}` : '', rest };
}

/** Go's `Duration.String()` for an int64 nanosecond count: `2h45m0s`, `1.5s`, `12.5µs`, `0s`. */
export function formatGoDuration(ns: bigint): string {
  if (ns < -TWO63 || ns > MAX_INT64) throw new RangeError(`${ns} ns is outside int64`);
  const neg = ns < 0n;
  let u = neg ? -ns : ns;
  let out: string;
  if (u < SEC) {
    if (u === 0n) return '0s';
    let prec: number;
    let unit: string;
    if (u < US) {
      prec = 0;
      unit = 'ns';
    } else if (u < MS) {
      prec = 3;
      unit = '\u00b5s';
    } else {
      prec = 6;
      unit = 'ms';
    }
    const frac = fmtFrac(u, prec);
    out = `${frac.rest}${frac.text}${unit}`;
  } else {
    const frac = fmtFrac(u, 9);
    u = frac.rest;
    out = `${u % 60n}${frac.text}s`;
    u /= 60n;
    if (u > 0n) {
      out = `${u % 60n}m${out}`;
      u /= 60n;
      if (u > 0n) out = `${u}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}

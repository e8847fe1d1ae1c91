/**
 * A cursor over a JSON text for readers that take one fixed shape (range-reader.ts): whitespace, strings without
 * escapes, keys, separators, numbers and literals, each checked against JSON's grammar as it is read, with no parse
 * tree. Each step returns false (or -1, undefined) where the text is not what it expects; the reader then gives up.
 */
import { Ch, skipSpace } from './json-slices.js';
import { decimalInto } from './range-values.js';

/**
 * The outcome of a number or string read as a point's time or value: its number, or NaN when it is not a decimal
 * (decimalOf). An array's element rather than a variable: a fraction stored in a variable of the module is a number
 * object of its own each time (two per point).
 */
export const NUM = new Float64Array(3);
/** Where scalar(at) found a string's text: [2·at, 2·at + 1] = its start and end; start -1 for a JSON number. */
export const SPAN = new Int32Array(6);

/** The value of the digits (after an optional minus) of a JSON integer in text[start, end): exact to 15 digits, else Number(). */
function integerOf(t: string, start: number, end: number): number {
  const neg = t.charCodeAt(start) === Ch.Minus;
  const from = neg ? start + 1 : start;
  if (end - from > 15) return Number(t.slice(start, end));
  let n = 0;
  for (let p = from; p < end; p++) n = n * 10 + (t.charCodeAt(p) - Ch.Zero);
  return neg ? -n : n;
}

function isHex(c: number): boolean {
  return (c >= Ch.Zero && c <= Ch.Nine) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** A position in a JSON text, and the steps that read it. */
export class JsonCursor {
  protected text = '';
  protected pos = 0;

  /** Past any whitespace: the code of the character there (NaN at the end). */
  protected ws(): number {
    this.pos = skipSpace(this.text, this.pos);
    return this.text.charCodeAt(this.pos);
  }

  /** At a quote: the index of the closing quote of a string without escapes or control characters, else -1. */
  protected stringClose(): number {
    const t = this.text;
    for (let p = this.pos + 1; p < t.length; p++) {
      const c = t.charCodeAt(p);
      if (c === Ch.Quote) return p;
      if (c === Ch.Backslash || c < Ch.Space) return -1;
    }
    return -1;
  }

  /** At a quote: skip the string. */
  protected skipString(): boolean {
    const close = this.stringClose();
    if (close < 0) return false;
    this.pos = close + 1;
    return true;
  }

  /** A key, its colon and the whitespace after: the index of the key's opening quote, or -1 when not so. */
  protected key(): number {
    if (this.ws() !== Ch.Quote) return -1;
    const open = this.pos;
    const close = this.stringClose();
    if (close < 0) return -1;
    this.pos = close + 1;
    if (this.ws() !== Ch.Colon) return -1;
    this.pos++;
    this.ws();
    return open;
  }

  /** After a member or element: true at `close` (`}` or `]`), false at `,` (either consumed); undefined for anything else. */
  protected next(close: number): boolean | undefined {
    const c = this.ws();
    this.pos++;
    if (c === close) return true;
    if (c === Ch.Comma) return false;
    return undefined;
  }

  protected objectNext(): boolean | undefined {
    return this.next(Ch.CloseCurly);
  }

  protected arrayNext(): boolean | undefined {
    return this.next(Ch.CloseSquare);
  }

  /** A JSON number at pos, into NUM[at]. False when the text there is not one. */
  protected number(at: number): boolean {
    const t = this.text;
    const start = this.pos;
    let p = start;
    let c = t.charCodeAt(p);
    if (c === Ch.Minus) c = t.charCodeAt(++p);
    if (c === Ch.Zero) c = t.charCodeAt(++p);
    else if (c > Ch.Zero && c <= Ch.Nine) {
      do c = t.charCodeAt(++p);
      while (c >= Ch.Zero && c <= Ch.Nine);
    } else return false;
    let plain = true;
    if (c === Ch.Dot) {
      plain = false;
      c = t.charCodeAt(++p);
      if (!(c >= Ch.Zero && c <= Ch.Nine)) return false;
      do c = t.charCodeAt(++p);
      while (c >= Ch.Zero && c <= Ch.Nine);
    }
    if (c === Ch.LowerE || c === Ch.UpperE) {
      plain = false;
      c = t.charCodeAt(++p);
      if (c === Ch.Plus || c === Ch.Minus) c = t.charCodeAt(++p);
      if (!(c >= Ch.Zero && c <= Ch.Nine)) return false;
      do c = t.charCodeAt(++p);
      while (c >= Ch.Zero && c <= Ch.Nine);
    }
    this.pos = p;
    if (plain) NUM[at] = integerOf(t, start, p);
    else decimalInto(t, start, p, NUM, at);
    return true;
  }

  /** A point's time or value at pos, a number or a string, into NUM[at] (NaN when the string is not a decimal: decimalInto). */
  protected scalar(at: number): boolean {
    if (this.text.charCodeAt(this.pos) !== Ch.Quote) {
      SPAN[2 * at] = -1;
      return this.number(at);
    }
    const close = this.stringClose();
    if (close < 0) return false;
    SPAN[2 * at] = this.pos + 1;
    SPAN[2 * at + 1] = close;
    decimalInto(this.text, this.pos + 1, close, NUM, at);
    this.pos = close + 1;
    return true;
  }

  /** `true`, `false` or `null` at pos. */
  protected literal(): boolean {
    const t = this.text;
    const c = t.charCodeAt(this.pos);
    const word = c === Ch.LowerT ? 'true' : c === Ch.LowerF ? 'false' : c === Ch.LowerN ? 'null' : undefined;
    if (word === undefined || !t.startsWith(word, this.pos)) return false;
    this.pos += word.length;
    return true;
  }

  /** A string, number or literal at pos, skipped; false for anything else (an object or array is not taken). */
  protected skipSimple(): boolean {
    const c = this.text.charCodeAt(this.pos);
    if (c === Ch.Quote) return this.skipString();
    if (c === Ch.Minus || (c >= Ch.Zero && c <= Ch.Nine)) return this.number(2);
    return this.literal();
  }

  /**
   * At a quote: a JSON string, escapes allowed, checked to its end (undefined when it is not valid JSON), of which
   * only the first `keep` code units are decoded and kept: a long string costs a scan, not a copy.
   */
  protected escapedString(keep: number): string | undefined {
    const t = this.text;
    const start = this.pos + 1;
    let units = 0;
    let cut = -1;
    let p = start;
    for (; p < t.length; p++) {
      if (units === keep && cut < 0) cut = p;
      const c = t.charCodeAt(p);
      if (c === Ch.Quote) break;
      if (c < Ch.Space) return undefined;
      if (c === Ch.Backslash) {
        const e = t.charCodeAt(p + 1);
        if (e === 0x75) {
          for (let k = p + 2; k < p + 6; k++) if (!isHex(t.charCodeAt(k))) return undefined;
          p += 5;
        } else if (e === Ch.Quote || e === Ch.Backslash || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) p++;
        else return undefined;
      }
      units++;
    }
    if (p >= t.length) return undefined;
    this.pos = p + 1;
    return JSON.parse(`"${t.slice(start, cut < 0 ? p : cut)}"`) as string;
  }

  /** The key whose opening quote is at `open` (the key() just read) is `name`. */
  protected keyIsBefore(open: number, name: string): boolean {
    const t = this.text;
    return t.charCodeAt(open + 1 + name.length) === Ch.Quote && t.startsWith(name, open + 1);
  }
}

/**
 * A JSON array's text cut into its elements without parsing them, and one element parsed on its own: a large
 * answer that is an array of independent parts (the range API's answers, one per query) is parsed part by part, so
 * only one part's tree is alive at a time.
 */

/** The character codes of JSON's structure, numbers and literals: for the scans here and json-cursor.ts's. */
export const enum Ch {
  Tab = 0x09,
  Newline = 0x0a,
  Return = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Plus = 0x2b,
  Comma = 0x2c,
  Minus = 0x2d,
  Dot = 0x2e,
  Zero = 0x30,
  Nine = 0x39,
  Colon = 0x3a,
  UpperE = 0x45,
  OpenSquare = 0x5b,
  Backslash = 0x5c,
  CloseSquare = 0x5d,
  LowerE = 0x65,
  LowerF = 0x66,
  LowerN = 0x6e,
  LowerT = 0x74,
  OpenCurly = 0x7b,
  CloseCurly = 0x7d,
}

function isJsonSpace(c: number): boolean {
  return c === Ch.Space || c === Ch.Newline || c === Ch.Return || c === Ch.Tab;
}

/** The index of the quote that ends the string opening at `at`, or -1. */
function stringEnd(text: string, at: number): number {
  let j = at;
  for (;;) {
    j = text.indexOf('"', j + 1);
    if (j < 0) return -1;
    let k = j - 1;
    while (text.charCodeAt(k) === Ch.Backslash) k--;
    // An even run of backslashes before it escapes nothing: the string ends here.
    if ((j - 1 - k) % 2 === 0) return j;
  }
}

/** The index of the first character at or after `at` that is not JSON whitespace (the text's length if none). */
export function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++;
  return i;
}

/**
 * How deep a JSON value may nest (arrays and objects) before it is refused unparsed. A range answer is five levels
 * deep (the request's array, the answer, `data`, an entry, `values`, a point: six with the request); V8's parser
 * is not recursive, but each level is an object of its own, so a few megabytes of brackets, under every byte and
 * value cap, would make hundreds of megabytes of parsed tree.
 */
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting the last elementEnd() saw in its element (0 for a string, number or literal). */
export let lastDepth = 0;

/**
 * The deepest nesting of arrays and objects in text[start, end) (strings skipped whole), stopping as soon as it
 * passes `limit` (then limit + 1). Pure.
 */
export function nestingDepth(text: string, start = 0, end = text.length, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === Ch.Quote) {
      i = stringEnd(text, i);
      if (i < 0) return deepest;
    } else if (c === Ch.OpenSquare || c === Ch.OpenCurly) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === Ch.CloseSquare || c === Ch.CloseCurly) depth--;
  }
  return deepest;
}

/**
 * The end of the array element that starts at `start` (not whitespace): the index of the `,` or `]` that follows
 * it at its own depth, found without parsing it (a string is skipped whole: a bracket or comma in it is text;
 * brackets are counted). -1 when the text ends first or closes with `}`. Sets `lastDepth` to the element's deepest
 * nesting, so that the caller can refuse it before a parse.
 */
export function elementEnd(text: string, start: number): number {
  let depth = 0;
  let deepest = 0;
  lastDepth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === Ch.Quote) {
      i = stringEnd(text, i);
      if (i < 0) return -1;
    } else if (c === Ch.OpenSquare || c === Ch.OpenCurly) {
      if (++depth > deepest) lastDepth = deepest = depth;
    } else if (c === Ch.CloseSquare || c === Ch.CloseCurly) {
      if (depth > 0) depth--;
      else return c === Ch.CloseSquare ? i : -1;
    } else if (c === Ch.Comma && depth === 0) return i;
  }
  return -1;
}

/**
 * The [start, end) offsets of the elements of a text that is a JSON array at its top level (start, end, start,
 * end…), found without parsing them (elementEnd). Undefined when the scan cannot read the text as such an array
 * (the caller then parses it whole, which decides); whether each element is JSON is left to its own parse. Pure.
 */
export function arrayElementBounds(text: string): number[] | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== Ch.OpenSquare) return undefined;
  i = skipSpace(text, i + 1);
  const out: number[] = [];
  if (text.charCodeAt(i) !== Ch.CloseSquare) {
    for (;;) {
      // An element must be there: a `,` or `]` here (after `[` or a comma) is not JSON.
      const c = text.charCodeAt(i);
      if (i >= text.length || c === Ch.Comma || c === Ch.CloseSquare) return undefined;
      const end = elementEnd(text, i);
      if (end < 0) return undefined;
      out.push(i, end);
      if (text.charCodeAt(end) === Ch.CloseSquare) {
        i = end;
        break;
      }
      i = skipSpace(text, end + 1);
    }
  }
  return skipSpace(text, i + 1) === text.length ? out : undefined;
}

/** JSON.parse of text[start, end); a SyntaxError names the position in the whole text, never its content. */
export function parseSlice(text: string, start: number, end: number): unknown {
  try {
    return JSON.parse(text.slice(start, end));
  } catch (err) {
    // V8 names a position for some errors only; otherwise the answer's own start is the position given.
    const at = /position (\d+)/.exec((err as Error).message);
    throw new SyntaxError(at === null ? `Not valid JSON: the answer at position ${start}` : `Unexpected token in JSON at position ${start + Number(at[1])}`);
  }
}


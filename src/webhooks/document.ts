/**
 * What the Sync Gateway receiver reads from a posted document, decided from the raw bytes with bounded work.
 *
 * The receiver needs three facts: the body is one JSON object, whether `_deleted` is `true`, and the top-level
 * value of the configured type field. Before `JSON.parse` sees the bytes, one pass over them measures the
 * nesting and stops at the first byte past `maxDepth`: a hostile body of a million `[` costs a few hundred
 * bytes' work, never a million-deep parse. Only what the receiver needs leaves this module (a short string
 * for the type, never the document), so nothing large crosses threads back.
 *
 * Pure and free of Node's thread APIs: the parse worker (parse-worker.ts) runs it, and tests call it directly.
 */

/** Nesting deeper than this is refused. Sync Gateway documents are application JSON: a few levels, rarely dozens. */
export const MAX_DOCUMENT_DEPTH = 256;

/** Type values longer than this are not worth a label (the receiver counts them as `other`). */
export const MAX_TYPE_LENGTH = 100;

export type DocumentVerdict =
  | { readonly kind: 'document'; readonly deleted: boolean; readonly type: TypeValue }
  | { readonly kind: 'bad_json' }
  | { readonly kind: 'not_object' }
  /** `scanned`: how many bytes were read before refusing (at most the first byte past the bound). */
  | { readonly kind: 'too_deep'; readonly scanned: number };

/** The type field as the receiver labels it: absent or not a scalar, a scalar's text, or too long to label. */
export type TypeValue = { readonly kind: 'none' } | { readonly kind: 'value'; readonly text: string } | { readonly kind: 'too_long' };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * The first offset at which the nesting exceeds `maxDepth`, or -1 when it never does. Brackets inside strings
 * do not count; the pass does not check the rest of the grammar (`JSON.parse` does, once the depth is known).
 */
export function depthExceededAt(bytes: Uint8Array, maxDepth: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > maxDepth) return i;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--;
    }
  }
  return -1;
}

/** Invalid sequences become U+FFFD; a byte-order mark is kept, so JSON.parse refuses it as before. */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

function typeValue(value: unknown): TypeValue {
  if (!(typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) return { kind: 'none' };
  const text = String(value);
  if (text === '') return { kind: 'none' };
  return text.length > MAX_TYPE_LENGTH ? { kind: 'too_long' } : { kind: 'value', text };
}

/** Read a posted body: depth first (bounded), then the grammar, then the two fields the receiver counts. */
export function readDocument(bytes: Uint8Array, typeField: string | undefined, maxDepth = MAX_DOCUMENT_DEPTH): DocumentVerdict {
  const at = depthExceededAt(bytes, maxDepth);
  if (at >= 0) return { kind: 'too_deep', scanned: at + 1 };
  let doc: unknown;
  try {
    doc = JSON.parse(UTF8.decode(bytes));
  } catch {
    return { kind: 'bad_json' };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { kind: 'not_object' };
  const fields = doc as Record<string, unknown>;
  const deleted = fields._deleted === true;
  return { kind: 'document', deleted, type: typeField === undefined || deleted ? { kind: 'none' } : typeValue(fields[typeField]) };
}

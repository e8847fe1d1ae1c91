import { describe, expect, it } from 'vitest';
import { depthExceededAt, MAX_DOCUMENT_DEPTH, MAX_TYPE_LENGTH, readDocument } from '../../src/webhooks/document.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('webhook document reading', () => {
  it('stops at the first byte past the depth bound, whatever follows', () => {
    const hostile = bytes('['.repeat(1024 * 1024));
    expect(depthExceededAt(hostile, MAX_DOCUMENT_DEPTH)).toBe(MAX_DOCUMENT_DEPTH);
    const verdict = readDocument(hostile, 'type');
    expect(verdict).toEqual({ kind: 'too_deep', scanned: MAX_DOCUMENT_DEPTH + 1 });
    // Inside an object, mixed brackets: the count is of open levels, not of bytes.
    const mixed = bytes(`{"a":${'[{"b":'.repeat(200)}1${'}]'.repeat(200)}}`);
    expect(depthExceededAt(mixed, MAX_DOCUMENT_DEPTH)).toBe(5 + 6 * 127 + 1); // the `{` of the 128th `[{"b":`: level 257
  });

  it('takes a document exactly at the bound', () => {
    const atBound = bytes(`{"_id":"x","a":${'['.repeat(MAX_DOCUMENT_DEPTH - 1)}${']'.repeat(MAX_DOCUMENT_DEPTH - 1)}}`);
    expect(depthExceededAt(atBound, MAX_DOCUMENT_DEPTH)).toBe(-1);
    expect(readDocument(atBound, 'type')).toEqual({ kind: 'document', deleted: false, type: { kind: 'none' } });
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const s = bytes(`{"t":"${'[{'.repeat(500)}\\"${'['.repeat(500)}","type":"hotel"}`);
    expect(depthExceededAt(s, 2)).toBe(-1);
    expect(readDocument(s, 'type')).toEqual({ kind: 'document', deleted: false, type: { kind: 'value', text: 'hotel' } });
  });

  it('gives the receiver the verdict and the two fields it counts, nothing of the document', () => {
    expect(readDocument(bytes('{"_id": "a", '), 'type')).toEqual({ kind: 'bad_json' });
    expect(readDocument(bytes(''), 'type')).toEqual({ kind: 'bad_json' });
    expect(readDocument(bytes('\uFEFF{"_id":"a"}'), 'type')).toEqual({ kind: 'bad_json' });
    expect(readDocument(bytes('[1,2]'), 'type')).toEqual({ kind: 'not_object' });
    expect(readDocument(bytes('null'), 'type')).toEqual({ kind: 'not_object' });
    expect(readDocument(bytes('{"_id":"a","_deleted":true,"type":"hotel"}'), 'type')).toEqual({ kind: 'document', deleted: true, type: { kind: 'none' } });
    expect(readDocument(bytes('{"_id":"a","type":7}'), 'type')).toEqual({ kind: 'document', deleted: false, type: { kind: 'value', text: '7' } });
    expect(readDocument(bytes('{"_id":"a","type":{"nested":true}}'), 'type')).toEqual({ kind: 'document', deleted: false, type: { kind: 'none' } });
    expect(readDocument(bytes(`{"type":"${'x'.repeat(MAX_TYPE_LENGTH + 1)}"}`), 'type')).toEqual({ kind: 'document', deleted: false, type: { kind: 'too_long' } });
    expect(readDocument(bytes('{"type":"hotel"}'), undefined)).toEqual({ kind: 'document', deleted: false, type: { kind: 'none' } });
  });
});

/** Access to the real captured payloads in test/fixtures/couchbase, which the simulator serves as templates. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../paths.js';

export { PACKAGE_ROOT };
export const FIXTURES_DIR = join(PACKAGE_ROOT, 'test', 'fixtures', 'couchbase');

const cache = new Map<string, unknown>();

/** Parse a fixture (`endpoint-folder/file.json`); parsed once, deep-copied on every call. */
export function fixture<T = unknown>(rel: string): T {
  let v = cache.get(rel);
  if (v === undefined) {
    v = JSON.parse(readFileSync(join(FIXTURES_DIR, rel), 'utf8'));
    cache.set(rel, v);
  }
  return structuredClone(v) as T;
}

export function fixtureText(rel: string): string {
  return readFileSync(join(FIXTURES_DIR, rel), 'utf8');
}

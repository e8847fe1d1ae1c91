/**
 * Layering and single definitions (issue 11, item 7): the REST layer (src/couchbase/) never depends on the
 * collectors' API, collector policy lives in src/collectors/, and the helpers shared by collectors are defined
 * once. Checked on the source text, since what is tested is where things are written.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');
const read = (rel: string): string => readFileSync(join(SRC, rel), 'utf8');
const ts = (dir: string): string[] => readdirSync(join(SRC, dir)).filter((f) => f.endsWith('.ts')).map((f) => `${dir}/${f}`);


describe('layers', () => {
  it('src/couchbase never imports from src/collectors', () => {
    const offenders = ts('couchbase').filter((f) => /from '\.\.\/collectors\//.test(read(f)));
    expect(offenders).toEqual([]);
  });

  it('collector policy (reportForbidden) lives in src/collectors', () => {
    for (const f of ts('couchbase')) expect(read(f), f).not.toMatch(/function reportForbidden/);
    expect(read('collectors/helpers.ts')).toMatch(/export function reportForbidden/);
  });

  it('shared helpers are defined once', () => {
    const files = [...ts('collectors'), ...ts('couchbase')];
    const defs = (re: RegExp): string[] => files.filter((f) => re.test(read(f)));
    expect(defs(/^export type Skip\b|^type Skip\b/m)).toEqual(['collectors/types.ts']);
    expect(defs(/function oneHot\b/)).toEqual(['collectors/helpers.ts']);
    expect(defs(/function isoToSeconds\b|Date\.parse\(iso\)/)).toEqual(['collectors/helpers.ts']);
    // nodes' numeric-string parser and samples' type guard mean different things: different names.
    expect(read('collectors/nodes.ts')).not.toMatch(/function finite\b/);
  });

  it('dead exports are gone', () => {
    expect(read('collectors/index.ts')).not.toMatch(/getCollector/);
  });
});

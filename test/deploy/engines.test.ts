/**
 * `npm ci` must install cleanly on the Node versions CI runs (20 and 24): no locked package may declare an
 * `engines.node` range that the running Node does not satisfy (npm's EBADENGINE warning). fastify's
 * light-my-request 6.8 pulled cookie 2, which wants Node 22; package.json's `overrides` pins 6.6.0. And the
 * runtime dependencies must accept the oldest Node that package.json's `engines` promises.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';

interface Lock {
  packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } | string[] }>;
}

const lock = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package-lock.json'), 'utf8')) as Lock;
const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { engines?: { node?: string }; overrides?: Record<string, string> };
const engines = pkg.engines?.node ?? '';
/** The oldest Node cbwatch says it runs on. */
const oldest = semver.minVersion(engines)?.version ?? 'none';

describe('package engines', () => {
  it(`every locked package accepts the running Node (${process.version})`, () => {
    const refused: string[] = [];
    for (const [path, p] of Object.entries(lock.packages)) {
      if (path === '' || Array.isArray(p.engines)) continue;
      const range = p.engines?.node;
      if (range && !semver.satisfies(process.version, range)) refused.push(`${path}@${p.version ?? '?'} wants node ${range}`);
    }
    expect(refused).toEqual([]);
  });

  it('package.json and package-lock.json declare the same engines.node', () => {
    expect(engines).toBe('>=20.18.1');
    expect((lock.packages[''] as { engines?: { node?: string } }).engines?.node).toBe(engines);
  });

  // What a user's `npm install cbwatch` gets (no development dependencies) must run on every Node that
  // engines admits, not only on the Node running this test: undici 7 wants >= 20.18.1, above the old 20.15.
  it(`every locked runtime dependency accepts every Node that engines admits (${engines})`, () => {
    const refused: string[] = [];
    for (const [path, p] of Object.entries(lock.packages)) {
      if (path === '' || p.dev || Array.isArray(p.engines)) continue;
      const range = p.engines?.node;
      if (range && !semver.subset(engines, range)) refused.push(`${path}@${p.version ?? '?'} wants node ${range}`);
    }
    expect(refused).toEqual([]);
  });

  it('light-my-request is pinned by an override to a release using cookie 1 (Node >= 18)', () => {
    expect(pkg.overrides?.['light-my-request']).toBe('6.6.0');
    const cookies = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/cookie$/.test(path));
    expect(cookies.length).toBeGreaterThan(0);
    for (const [path, cookie] of cookies) {
      expect(cookie.version, path).toMatch(/^1\./);
      expect(semver.satisfies(oldest, (cookie.engines as { node: string }).node), path).toBe(true);
    }
  });
});

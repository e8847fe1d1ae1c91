/**
 * `npm ci` must install cleanly on the Node versions CI runs (20 and 24): no locked package may declare an
 * `engines.node` range that the running Node does not satisfy (npm's EBADENGINE warning). fastify's
 * light-my-request 6.8 pulled cookie 2, which wants Node 22; package.json's `overrides` pins 6.6.0.
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
const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { overrides?: Record<string, string> };

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

  it('light-my-request is pinned by an override to a release using cookie 1 (Node >= 18)', () => {
    expect(pkg.overrides?.['light-my-request']).toBe('6.6.0');
    const cookies = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/cookie$/.test(path));
    expect(cookies.length).toBeGreaterThan(0);
    for (const [path, cookie] of cookies) {
      expect(cookie.version, path).toMatch(/^1\./);
      expect(semver.satisfies('20.15.0', (cookie.engines as { node: string }).node), path).toBe(true);
    }
  });
});

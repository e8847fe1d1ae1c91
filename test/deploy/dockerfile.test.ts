/**
 * The Dockerfile, read (no registry is reachable where the tests run, so it is not built here): Node 24
 * base images, every COPY source present, the HEALTHCHECK through `cbwatch healthcheck`'s light entry (not a hard-coded
 * URL), OCI labels, and the REVISION build argument reaching CBWATCH_REVISION, which cbwatch_build_info reports.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IMAGE_FLAGS } from '../../bench/healthcheck.js';
import { revision } from '../../src/metrics/build.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

const text = readFileSync(join(PACKAGE_ROOT, 'Dockerfile'), 'utf8');
/** Instructions with their continuation lines joined, comments dropped. */
const instructions = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const of = (kw: string): string[] => instructions.filter((l) => l.toUpperCase().startsWith(`${kw} `)).map((l) => l.slice(kw.length + 1).trim());

describe('Dockerfile', () => {
  it('builds and runs on Node 24 (bookworm-slim)', () => {
    expect(of('ARG')).toContain('NODE_IMAGE=node:24-bookworm-slim');
    const froms = of('FROM');
    expect(froms).toHaveLength(2);
    for (const f of froms) expect(f).toMatch(/^\$\{NODE_IMAGE\} AS \w+$/);
  });

  it('copies only what exists in the repository', () => {
    for (const c of of('COPY')) {
      if (c.startsWith('--from=')) continue;
      const parts = c.split(/\s+/);
      for (const src of parts.slice(0, -1)) expect(existsSync(join(PACKAGE_ROOT, src)), src).toBe(true);
    }
  });

  it('HEALTHCHECK runs `cbwatch healthcheck`\'s light entry point (which reads the listen address and web config), not a fixed URL', () => {
    const hc = of('HEALTHCHECK');
    expect(hc).toHaveLength(1);
    // dist/healthcheck.cjs: the probe without the CLI and the daemon (test/healthcheck-probe.test.ts runs it).
    // --jitless: the Node flags bench/healthcheck.ts measures the image's probe with (IMAGE_FLAGS).
    expect(hc[0]).toContain(`CMD ${JSON.stringify(['node', ...IMAGE_FLAGS, '/opt/cbwatch/dist/healthcheck.cjs']).replaceAll(',', ', ')}`);
    expect(of('COPY')).toContain('--from=build /src/dist ./dist');
    expect(text).not.toMatch(/127\.0\.0\.1:9420/);
  });

  it('has OCI labels, and the REVISION build argument becomes CBWATCH_REVISION', () => {
    const labels = of('LABEL').join(' ');
    for (const k of ['title', 'description', 'licenses', 'source', 'version', 'revision', 'created'])
      expect(labels).toContain(`org.opencontainers.image.${k}=`);
    expect(labels).toContain('org.opencontainers.image.revision="${REVISION}"');
    expect(of('ARG')).toContain('REVISION=unknown');
    expect(of('ENV').join(' ')).toMatch(/CBWATCH_REVISION=\$\{REVISION\}/);
    expect(of('USER')).toEqual(['node']);
  });

  it('listens on every address of the container, the demo too (its own default, 127.0.0.1, is out of reach of -p)', () => {
    expect(of('ENV').join(' ').split(/\s+/)).toContain('CBWATCH_WEB_LISTEN_ADDRESS=:9420');
    expect(of('EXPOSE')).toEqual(['9420']);
  });
});

describe('cbwatch_build_info{revision}', () => {
  const saved = process.env.CBWATCH_REVISION;
  afterEach(() => {
    if (saved === undefined) delete process.env.CBWATCH_REVISION;
    else process.env.CBWATCH_REVISION = saved;
  });

  it('reports CBWATCH_REVISION, else the revision recorded at build time (dist/build-info.json), else "unknown"', () => {
    process.env.CBWATCH_REVISION = '0123abcd';
    expect(revision()).toBe('0123abcd');
    delete process.env.CBWATCH_REVISION;
    const recorded = join(PACKAGE_ROOT, 'dist', 'build-info.json');
    expect(revision()).toBe(existsSync(recorded) ? (JSON.parse(readFileSync(recorded, 'utf8')) as { revision: string }).revision : 'unknown');
  });
});

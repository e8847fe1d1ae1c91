/**
 * The HTTP thread loads only what serving needs: the collectors, the Couchbase client (undici) and the
 * scheduler are loaded in the collection worker, where they run. Each module costs resident memory
 * in every thread that loads it (bench/RESULTS.md, "Where the resident memory goes"), so a static import that drags
 * them into the HTTP thread again is a regression this test names.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');

/** Modules and packages reached by static (value) imports from `entry`; `import type` and `import()` are not. */
function staticGraph(entry: string, ext: '.ts' | '.js' = '.ts'): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^;'"]*?\s+from\s+)?'([^']+)';/gm)) {
      const spec = m[1] as string;
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, ext)));
      else if (!spec.startsWith('node:')) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string));
    }
  };
  visit(join(ROOT, entry));
  return { files, packages };
}

const rel = (files: Set<string>): string[] => [...files].map((f) => relative(ROOT, f)).sort();

interface BundleMeta {
  outputs: Record<string, { inputs: Record<string, unknown>; imports: Array<{ path: string; kind: string; external?: boolean }> }>;
}

/** The inputs (dist/ files, package files) of an entry bundle and of every chunk it imports statically. */
function loadedInputs(meta: BundleMeta, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (out: string): void => {
    const o = meta.outputs[out];
    if (!o || seen.has(out)) return;
    seen.add(out);
    for (const i of o.imports) if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  visit(entry);
  expect(seen.size, `${entry} in dist/bundle-meta.json`).toBeGreaterThan(0);
  return [...seen].flatMap((o) => Object.keys(meta.outputs[o]?.inputs ?? {}));
}

describe('module loading per thread', () => {
  it('the CLI (the HTTP thread of `cbwatch run`) loads neither the collectors nor the HTTP client nor the scheduler', () => {
    const g = staticGraph('src/cli.ts');
    // yaml is required on the first YAML file read (src/config/yamlfile.ts), not at start.
    expect([...g.packages].sort()).toEqual(['fastify', 'pino', 'prom-client', 'zod']);
    const files = rel(g.files);
    expect(files.filter((f) => f.startsWith('src/collectors/') || f.startsWith('src/couchbase/client') || f.startsWith('src/scheduler/') || f.startsWith('src/simulator/'))).toEqual([]);
    // What the test itself walks: a file it cannot see would make it pass for nothing.
    expect(files).toContain('src/daemon.ts');
    expect(files).toContain('src/collection/host.ts');
  });

  it('the collection worker loads neither the web server nor the configuration loader', () => {
    const g = staticGraph('src/collection/worker.ts');
    expect(g.packages.has('fastify')).toBe(false);
    expect(g.packages.has('yaml')).toBe(false);
    expect(rel(g.files)).toContain('src/couchbase/undici.ts');
    expect(rel(g.files)).toContain('src/collectors/xdcr.ts');
    expect(rel(g.files)).not.toContain('src/config/load.ts');
  });

  it('the collection worker loads only the packages collection needs: no logger, no metrics library, no web server', () => {
    // Each package costs resident memory in every thread that loads it (issue 26, item 2): the worker writes its
    // log lines itself (src/collection/worker-log.ts) and its request metrics' text too (src/metrics/requests.ts).
    const g = staticGraph('src/collection/worker.ts');
    // undici is required file by file (src/couchbase/undici.ts): its Pool and errors, not its index.
    expect([...g.packages].sort()).toEqual(['zod']);
    expect(rel(g.files)).toContain('src/couchbase/undici.ts');
    expect(rel(g.files)).toContain('src/collectors/xdcr.ts');
  });

  describe('what runs: the bundles (scripts/bundle.mjs, built by the suite\'s global setup)', () => {
    const meta = JSON.parse(readFileSync(join(ROOT, 'dist/bundle-meta.json'), 'utf8')) as BundleMeta;
    const packageOf = (input: string): string => {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
      return m ? (m[1] as string) : '(own)';
    };

    it('the worker bundle holds, of the packages, only zod; undici stays outside and is required part by part', () => {
      const inputs = loadedInputs(meta, 'dist/bundle/worker.js');
      expect([...new Set(inputs.map(packageOf))].sort()).toEqual(['(own)', 'zod']);
      expect(inputs).toContain('dist/couchbase/undici.js');
      expect(inputs).toContain('dist/collectors/xdcr.js');
      expect(inputs).not.toContain('dist/config/load.js');
    });

    it('the HTTP thread\'s bundle loads, before any import(), neither the collectors nor the HTTP client nor the scheduler', () => {
      const inputs = loadedInputs(meta, 'dist/bundle/cli.js');
      expect(inputs.filter((f) => /^dist\/(collectors\/|couchbase\/client|scheduler\/|simulator\/)/.test(f))).toEqual([]);
      expect(inputs).toContain('dist/daemon.js');
      expect(inputs).toContain('dist/collection/host.js');
      // fastify's schema compilers (ajv, fast-json-stringify) and pino are left to node_modules (see the script).
      const packages = new Set(inputs.map(packageOf));
      for (const p of ['ajv', 'ajv-formats', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'pino', 'yaml', 'undici']) expect(packages.has(p), p).toBe(false);
      expect(packages.has('fastify')).toBe(true);
    });

    it('the launcher and the CLI share one dist/hangup.js, which stays outside the bundle', () => {
      const cli = meta.outputs['dist/bundle/cli.js'];
      expect(cli?.imports.some((i) => i.path === '../hangup.js' && i.external === true)).toBe(true);
      expect(Object.keys(cli?.inputs ?? {})).not.toContain('dist/hangup.js');
    });
  });

  it("undici is loaded part by part, never through its index (fetch, WebSocket, mocks, caches: modules the client does not use)", () => {
    const src = readFileSync(join(ROOT, 'src/couchbase/undici.ts'), 'utf8');
    expect([...src.matchAll(/require\('([^']+)'\)/g)].map((m) => m[1])).toEqual(['undici/lib/dispatcher/pool.js', 'undici/lib/core/errors.js']);
    for (const dir of ['src/couchbase', 'src/collection', 'src/collectors', 'src/stats', 'src/scheduler']) {
      for (const f of readdirSync(join(ROOT, dir))) {
        if (!f.endsWith('.ts')) continue;
        const text = readFileSync(join(ROOT, dir, f), 'utf8');
        expect(/^import\s+(?!type\b)[^;]*from\s+'undici'/m.test(text), `${dir}/${f}`).toBe(false);
      }
    }
  });

  it("undici's parts are the objects its index exports (same require cache)", async () => {
    const parts = await import('../../src/couchbase/undici.js');
    const undici = await import('undici');
    expect(parts.Pool).toBe(undici.Pool);
    expect(parts.errors).toBe(undici.errors);
  });
});

#!/usr/bin/env node
// Writes dist/bundle/: the two threads' code as minified ES module bundles (esbuild), from tsc's output in dist/.
// Run after tsc by `npm run build`, `prepare` and the release script; bin/cbwatch.js loads dist/bundle/cli.js, the
// daemon starts its collection worker from dist/bundle/worker.js, a configuration reload's reader from
// dist/bundle/reload-worker.js and, with webhooks on, its webhook body parser from dist/bundle/webhook-parse.js.
//
// Why: each thread keeps the source text of every module it loads, and V8 keeps what it derives from it (the
// lazily compiled functions' scopes, one module record per file). Minified and in one file per thread (plus the
// chunks that only `import()` reaches: the simulator, `check`, the tools), a daemon at rest held 4–7 MB less on
// Node 20 (bench/RESULTS.md, "Footprint and CPU, seventh round"). Unminified bundles saved nothing measurable, and
// minifying only cbwatch's own modules saved 2–4 MB: most of the text is the packages'.
//
// What stays outside the bundles, loaded at run time from node_modules as before:
// - dist/hangup.js, which bin/cbwatch.js loads before the CLI: the CLI must see the same module (its handler);
// - pino: its transports find their worker files next to its own (__dirname), and cbwatch uses none, but a
//   bundled copy would look for them in dist/bundle/;
// - fastify's schema compilers (ajv, fast-json-stringify: a fifth of the HTTP thread's bundle), which fastify
//   requires only for a route with a schema (lazyCompilers in src/server/app.ts; no route of cbwatch has one);
// - what the code requires at run time by name: undici's parts (src/couchbase/undici.ts), yaml on the first YAML
//   file read, bcryptjs, node-cron on the first cron schedule or window configured (src/cron.ts).
// Names are kept (keepNames): error classes and stack traces read as in the sources, and no code has to care.
// The linked source maps lead back to src/ through tsc's maps (`node --enable-source-maps`).
import { build } from 'esbuild';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/** dist/hangup.js stays its own module: the launcher installs the handler the CLI later reads. */
const hangupOutside = {
  name: 'hangup-outside',
  setup(b) {
    b.onResolve({ filter: /^\.\/hangup\.js$/ }, () => ({ path: '../hangup.js', external: true }));
  },
};

// Chunks are named by their content: the previous build's would pile up.
rmSync(join(dist, 'bundle'), { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { cli: join(dist, 'cli.js'), worker: join(dist, 'collection', 'worker.js'), 'reload-worker': join(dist, 'reload-worker.js'), 'webhook-parse': join(dist, 'webhooks', 'parse-worker.js') },
  outdir: join(dist, 'bundle'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  minify: true,
  keepNames: true,
  sourcemap: 'linked',
  external: ['pino', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'],
  plugins: [hangupOutside],
  // Packages written as CommonJS call require(); in an ES module it must be made.
  banner: { js: "import { createRequire as __cbwatchRequire } from 'node:module'; const require = __cbwatchRequire(import.meta.url);" },
  metafile: true,
  logLevel: 'warning',
});
// What each bundle holds and imports: test/collection/imports.test.ts checks what each thread loads from it.
writeFileSync(join(dist, 'bundle-meta.json'), JSON.stringify(result.metafile));

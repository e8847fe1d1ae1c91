/**
 * Vitest global setup: the daemon's collection worker runs dist/bundle/worker.js (a worker thread needs
 * JavaScript; the tests import src/*.ts), and the launcher dist/bundle/cli.js. Rebuild dist/ (tsc, then
 * scripts/bundle.mjs) when any source file or the bundle script is newer than the worker bundle, so what runs is
 * the code under test. `npm ci` builds dist/ too (prepare script).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (/\.c?ts$/.test(e.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

function builtAt(): number {
  try {
    return statSync(join(ROOT, 'dist', 'bundle', 'worker.js')).mtimeMs;
  } catch {
    return 0;
  }
}

export default function setup(): void {
  const bundler = join(ROOT, 'scripts', 'bundle.mjs');
  if (builtAt() >= Math.max(newestSource(join(ROOT, 'src')), statSync(bundler).mtimeMs)) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  execFileSync(process.execPath, [bundler], { cwd: ROOT, stdio: 'inherit' });
}

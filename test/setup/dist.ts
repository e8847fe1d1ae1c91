/**
 * Vitest global setup: the daemon's collection worker runs dist/collection/worker.js (a worker thread needs
 * JavaScript; the tests import src/*.ts). Rebuild dist/ when any source file is newer than the worker file,
 * so the worker always runs the code under test. `npm ci` builds dist/ too (prepare script).
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
    return statSync(join(ROOT, 'dist', 'collection', 'worker.js')).mtimeMs;
  } catch {
    return 0;
  }
}

export default function setup(): void {
  if (builtAt() >= newestSource(join(ROOT, 'src'))) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
}

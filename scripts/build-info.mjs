#!/usr/bin/env node
// Writes dist/build-info.json: what `cbwatch --version` and cbwatch_build_info report besides the version
// (which comes from package.json). Run after tsc by `npm run build`, `prepare` (so `npm ci` and `npm pack`)
// and the release script. Each field can be set from the environment (a build outside a git checkout, or a
// reproducible one): CBWATCH_REVISION, CBWATCH_BRANCH, CBWATCH_BUILD_USER, and SOURCE_DATE_EPOCH for the
// date; otherwise git answers, and a field nobody can answer is "unknown".
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function git(...args) {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** prometheus/common's build date format: 20060102-15:04:05, UTC. */
export function formatBuildDate(d) {
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
}

function user() {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return 'unknown';
  }
}

const env = process.env;
const epoch = env.SOURCE_DATE_EPOCH !== undefined && /^\d+$/.test(env.SOURCE_DATE_EPOCH) ? Number(env.SOURCE_DATE_EPOCH) * 1000 : Date.now();
const info = {
  revision: env.CBWATCH_REVISION || git('rev-parse', 'HEAD') || 'unknown',
  branch: env.CBWATCH_BRANCH || git('rev-parse', '--abbrev-ref', 'HEAD') || 'unknown',
  buildUser: env.CBWATCH_BUILD_USER || user(),
  buildDate: formatBuildDate(new Date(epoch)),
};
// CBWATCH_BUILD_INFO_OUT writes elsewhere (the test of this script).
const out = env.CBWATCH_BUILD_INFO_OUT || join(root, 'dist', 'build-info.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(info, null, 2)}\n`);

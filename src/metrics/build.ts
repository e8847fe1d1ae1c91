/**
 * cbwatch_build_info and `cbwatch --version`: the version from package.json, the rest from dist/build-info.json
 * (written at build time by scripts/build-info.mjs). CBWATCH_REVISION in the environment overrides the recorded
 * revision (the Docker image sets it from its REVISION build argument).
 */
import { readFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../paths.js';
import { SampleSet } from './family.js';
import { SELF } from './self-families.js';

export interface BuildInfo {
  version: string;
  revision: string;
  branch: string;
  buildUser: string;
  buildDate: string;
}

let version: string | undefined;
let recorded: Partial<BuildInfo> | undefined;

export function packageVersion(): string {
  if (version === undefined) {
    try {
      version = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      version = 'unknown';
    }
  }
  return version;
}

function recordedInfo(): Partial<BuildInfo> {
  if (recorded === undefined) {
    try {
      const raw = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'dist', 'build-info.json'), 'utf8')) as Record<string, unknown>;
      recorded = {};
      for (const k of ['revision', 'branch', 'buildUser', 'buildDate'] as const) {
        const v = raw[k];
        if (typeof v === 'string' && v !== '') recorded[k] = v;
      }
    } catch {
      recorded = {};
    }
  }
  return recorded;
}

export function buildInfo(): BuildInfo {
  const r = recordedInfo();
  return {
    version: packageVersion(),
    revision: process.env.CBWATCH_REVISION || r.revision || 'unknown',
    branch: r.branch ?? 'unknown',
    buildUser: r.buildUser ?? 'unknown',
    buildDate: r.buildDate ?? 'unknown',
  };
}

export function revision(): string {
  return buildInfo().revision;
}

/** `cbwatch --version`, in the layout of prometheus/common's version.Print. */
export function versionText(): string {
  const b = buildInfo();
  return [
    `cbwatch, version ${b.version} (branch: ${b.branch}, revision: ${b.revision})`,
    `  build user:       ${b.buildUser}`,
    `  build date:       ${b.buildDate}`,
    `  node version:     ${process.version}`,
    `  platform:         ${platform()}/${arch()}`,
    '',
  ].join('\n');
}

export function buildInfoSet(): SampleSet {
  const b = buildInfo();
  const s = new SampleSet();
  s.add(SELF.buildInfo, { version: b.version, revision: b.revision, branch: b.branch, build_date: b.buildDate, nodejs_version: process.version }, 1);
  return s;
}

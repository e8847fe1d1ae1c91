/** cbwatch_build_info, from package.json and the environment the build recorded. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../paths.js';
import { SampleSet } from './family.js';
import { SELF } from './self.js';

let version: string | undefined;

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

export function revision(): string {
  return process.env.CBWATCH_REVISION ?? 'unknown';
}

export function buildInfoSet(): SampleSet {
  const s = new SampleSet();
  s.add(SELF.buildInfo, { version: packageVersion(), revision: revision(), nodejs_version: process.version }, 1);
  return s;
}

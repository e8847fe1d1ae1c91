/**
 * Global setup of `npm run test:e2e`: release/ built from this revision (packaging/release.sh, when missing or built
 * from another one), and, when CBWATCH_MINBASE or CBWATCH_IMAGE asks for the root-only files, the Debian 12 minbase
 * root they both copy (.cache/bookworm-minbase, debootstrap, once). Done here, before any file runs, so that no two
 * files build them at once.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The revision release/'s tarball was built from, or undefined. */
function packedRevision(tgz: string): string | undefined {
  if (!existsSync(tgz)) return undefined;
  const r = spawnSync('tar', ['-xzOf', tgz, 'package/dist/build-info.json'], { encoding: 'utf8' });
  return r.status === 0 ? (JSON.parse(r.stdout) as { revision: string }).revision : undefined;
}

export default function setup(): void {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const out = join(ROOT, 'release');
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  const fresh =
    existsSync(join(out, `cbwatch_${version}_amd64.deb`)) &&
    existsSync(join(out, 'SHA256SUMS')) &&
    head.status === 0 &&
    packedRevision(join(out, `cbwatch-${version}.tgz`)) === head.stdout.trim();
  if (!fresh) execFileSync('bash', [join(ROOT, 'packaging', 'release.sh')], { cwd: ROOT, stdio: 'inherit' });
  const cache = join(ROOT, '.cache', 'bookworm-minbase');
  if ((process.env.CBWATCH_MINBASE === '1' || process.env.CBWATCH_IMAGE === '1') && !existsSync(join(cache, 'usr', 'bin', 'dpkg'))) {
    rmSync(cache, { recursive: true, force: true });
    execFileSync('debootstrap', ['--variant=minbase', '--include=adduser', 'bookworm', cache, 'http://deb.debian.org/debian'], { stdio: 'inherit' });
  }
}

/**
 * The Debian package installed where a user would put it: a Debian 12 minbase root (debootstrap
 * --variant=minbase, plus adduser, the package's one dependency outside it), entered with chroot. dpkg -i, then
 * `cbwatch --version`, a demo scraped from this side, `--config.check` of the shipped configuration from a shell,
 * and a purge that leaves nothing in /etc. Slow (a root of about 150 MB copied per run, built once into
 * .cache/bookworm-minbase, which needs the network), and it needs root: one of `npm run test:e2e`'s files, which
 * skips unless CBWATCH_MINBASE=1 (.ci/run sets it; the run's global setup builds release/ and the root first).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { startDemo } from '../helpers/demo-run.js';

const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const DEB = join(PACKAGE_ROOT, 'release', `cbwatch_${VERSION}_amd64.deb`);
const CACHE = join(PACKAGE_ROOT, '.cache', 'bookworm-minbase');
const enabled = process.env.CBWATCH_MINBASE === '1';

describe.skipIf(!enabled)('the Debian package in a debootstrap minbase root', () => {
  let tmp = '';
  let root = '';
  const inRoot = (...args: string[]) => spawnSync('chroot', [root, ...args], { encoding: 'utf8', env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' } });

  beforeAll(() => {
    if (!existsSync(DEB)) throw new Error(`${DEB} is missing: npm run release (or npm test) builds it`);
    if (!existsSync(join(CACHE, 'usr/bin/dpkg'))) {
      rmSync(CACHE, { recursive: true, force: true });
      execFileSync('debootstrap', ['--variant=minbase', '--include=adduser', 'bookworm', CACHE, 'http://deb.debian.org/debian'], { stdio: 'inherit' });
    }
    tmp = mkdtempSync(join(tmpdir(), 'cbwatch-minbase-'));
    root = join(tmp, 'root');
    execFileSync('cp', ['-a', CACHE, root]);
    copyFileSync(DEB, join(root, 'tmp', 'cbwatch.deb'));
  }, 900_000);
  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('installs with dpkg -i (every dependency is in minbase plus adduser) and runs cbwatch --version', () => {
    const i = inRoot('dpkg', '-i', '/tmp/cbwatch.deb');
    expect(i.status, i.stdout + i.stderr).toBe(0);
    const v = inRoot('cbwatch', '--version');
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout.split('\n')[0]).toMatch(new RegExp(`^cbwatch, version ${VERSION.replace(/\./g, '\\.')} `));
    expect(v.stdout).toMatch(/^ {2}node version: {5}v24\./m);
    expect(inRoot('getent', 'passwd', 'cbwatch').status).toBe(0);
  }, 120_000);

  it('serves the demo, scraped from outside the root', async () => {
    const demo = startDemo('chroot', [root, 'cbwatch', 'demo', '--web.listen-address', '127.0.0.1:0'], { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', CBWATCH_LOG_LEVEL: 'warn' });
    try {
      const { text } = await demo.untilUp();
      const { out, err } = demo.output();
      expect(text, `stdout:\n${out}\nstderr:\n${err}`).toMatch(/^couchbase_up\{couchbase_cluster="demo"\} 1$/m);
      expect(text).toMatch(/^cbwatch_build_info\{.*nodejs_version="v24\./m);
    } finally {
      expect(await demo.stop()).toBe(0);
    }
  }, 120_000);

  it('checks the shipped configuration from a shell, where $CREDENTIALS_DIRECTORY is unset', () => {
    writeFileSync(join(root, 'etc/cbwatch/couchbase-password'), 'secret', { mode: 0o600 });
    const r = inRoot('cbwatch', 'run', '--config', '/etc/cbwatch/cbwatch.yml', '--config.check');
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain('secret');
  });

  it('purges /etc/cbwatch with the password file, and says the system user stays', () => {
    const r = inRoot('dpkg', '--purge', 'cbwatch');
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(existsSync(join(root, 'etc/cbwatch'))).toBe(false);
    expect(existsSync(join(root, 'usr/lib/cbwatch'))).toBe(false);
    expect(r.stderr).toContain('the system user cbwatch is kept');
  }, 60_000);
});

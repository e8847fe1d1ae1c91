/**
 * `npm run release` (packaging/release.sh): the npm tarball and the Debian package, each tested where a user
 * would put it: the tarball installed globally into a throwaway prefix and run from outside any checkout, the
 * .deb extracted with dpkg-deb and its own launcher run on the Node 24 it carries. The artefacts are rebuilt here
 * when missing or built from another revision; release.sh builds in a copy of the tree, never in this checkout's
 * dist/, which the other test files run beside this one. lintian runs on the .deb in .ci/run, after the tests.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { findBinary } from '../helpers/tools.js';
import { startDemo, UP } from '../helpers/demo-run.js';

const OUT = join(PACKAGE_ROOT, 'release');
const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const TGZ = join(OUT, `cbwatch-${VERSION}.tgz`);
const DEB = join(OUT, `cbwatch_${VERSION}_amd64.deb`);
const tmp = mkdtempSync(join(tmpdir(), 'cbwatch-release-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function gitHead(): string | undefined {
  const r = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: PACKAGE_ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function packedRevision(): string | undefined {
  if (!existsSync(TGZ)) return undefined;
  const r = spawnSync('tar', ['-xzOf', TGZ, 'package/dist/build-info.json'], { encoding: 'utf8' });
  return r.status === 0 ? (JSON.parse(r.stdout) as { revision: string }).revision : undefined;
}

const head = gitHead();

beforeAll(() => {
  const fresh = existsSync(DEB) && existsSync(join(OUT, 'SHA256SUMS')) && packedRevision() === head;
  if (!fresh) execFileSync('bash', [join(PACKAGE_ROOT, 'packaging', 'release.sh')], { cwd: PACKAGE_ROOT, stdio: 'inherit' });
}, 900_000);

/** Runs `cbwatch demo` on an ephemeral port and resolves with /metrics once the demo cluster is up. */
async function demoMetrics(command: string, args: string[]): Promise<string> {
  const run = startDemo(command, [...args, 'demo', '--web.listen-address', '127.0.0.1:0'], { ...process.env, CBWATCH_LOG_LEVEL: 'warn' }, tmp);
  try {
    const { text } = await run.untilUp();
    if (!UP.test(text)) throw new Error(`demo did not serve couchbase_up 1\nstdout:\n${run.output().out}\nstderr:\n${run.output().err}`);
    return text;
  } finally {
    expect(await run.stop()).toBe(0);
  }
}

/** package-lock.json's production packages: path (node_modules/a/node_modules/b) → version. */
function lockedProduction(): Map<string, string> {
  const lock = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; dev?: boolean; devOptional?: boolean }> };
  const out = new Map<string, string>();
  for (const [path, p] of Object.entries(lock.packages)) if (path !== '' && !p.dev && !p.devOptional) out.set(path, p.version ?? '');
  return out;
}

/** The packages installed under `dir` (a package root): path relative to it (node_modules/a/node_modules/b) → version. */
function installedTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (modules: string): void => {
    if (!existsSync(modules)) return;
    for (const name of readdirSync(modules)) {
      if (name.startsWith('.')) continue;
      const names = name.startsWith('@') ? readdirSync(join(modules, name)).map((n) => `${name}/${n}`) : [name];
      for (const n of names) {
        const at = join(modules, n);
        const { version } = JSON.parse(readFileSync(join(at, 'package.json'), 'utf8')) as { version: string };
        out.set(posix.relative(dir, at), version);
        walk(join(at, 'node_modules'));
      }
    }
  };
  walk(join(dir, 'node_modules'));
  return out;
}

/** npm's warnings and errors in an install's output (`npm warn EBADENGINE …`, `npm WARN deprecated …`). */
const npmWarnings = (text: string): string[] => text.split('\n').filter((l) => /^npm (warn|WARN|ERR!|error)/.test(l));

const VERSION_LINE = new RegExp(`^cbwatch, version ${VERSION.replace(/\./g, '\\.')} \\(branch: \\S+, revision: ([0-9a-f]{40}|unknown)\\)$`);

describe('release/SHA256SUMS', () => {
  it('lists both artefacts (and the OCI image when `npm run release` built it) and matches them', () => {
    const sums = readFileSync(join(OUT, 'SHA256SUMS'), 'utf8').trim().split('\n').map((l) => l.split(/\s+/)[1]);
    const image = existsSync(join(OUT, `cbwatch-${VERSION}-oci.tar`)) ? [`cbwatch-${VERSION}-oci.tar`] : [];
    expect(sums).toEqual([`cbwatch-${VERSION}.tgz`, `cbwatch_${VERSION}_amd64.deb`, ...image]);
    const r = spawnSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: OUT, encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });
});

describe('the npm tarball', () => {
  const files = (): string[] => execFileSync('tar', ['-tzf', TGZ], { encoding: 'utf8' }).trim().split('\n').map((f) => f.replace(/^package\//, ''));

  it('holds the runtime files and nothing to build or test with', () => {
    const list = files();
    for (const f of ['package.json', 'bin/cbwatch.js', 'dist/hangup.js', 'dist/healthcheck.cjs', 'dist/bundle/cli.js', 'dist/bundle/worker.js', 'dist/build-info.json', 'test/fixtures/couchbase/SOURCES.md', 'alerts/cbwatch.rules.yml', 'CHANGELOG.md']) {
      expect(list).toContain(f);
    }
    expect(list.filter((f) => /^(src|bench|scripts|packaging|deploy)\//.test(f))).toEqual([]);
    expect(list.filter((f) => f.startsWith('test/') && !f.startsWith('test/fixtures/couchbase/'))).toEqual([]);
    expect(list.filter((f) => f.endsWith('.map') || f.endsWith('.test.ts') || f === 'dist/bundle-meta.json')).toEqual([]);
    const pkg = JSON.parse(execFileSync('tar', ['-xzOf', TGZ, 'package/package.json'], { encoding: 'utf8' })) as Record<string, unknown>;
    expect(pkg.scripts).toBeUndefined();
    expect(pkg.devDependencies).toBeUndefined();
    expect(pkg.bin).toEqual({ cbwatch: 'bin/cbwatch.js' });
  });

  it('ships only the compiled files something loads: those bin/cbwatch.js, dist/healthcheck.cjs and the collection worker reach', () => {
    const list = files();
    const shipped = new Set(list);
    // The entry points: the launcher, the light health check (the Debian unit and the image run it directly) and
    // the workers the daemon starts by path: collection (src/collection/host.ts), configuration reloads
    // (src/lifecycle.ts RELOAD_WORKER_FILE) and webhook bodies (src/webhooks/parser.ts PARSE_WORKER_FILE).
    const queue = ['bin/cbwatch.js', 'dist/healthcheck.cjs', 'dist/bundle/worker.js', 'dist/bundle/reload-worker.js', 'dist/bundle/webhook-parse.js'];
    const reached = new Set<string>();
    while (queue.length > 0) {
      const f = queue.pop() as string;
      if (reached.has(f)) continue;
      reached.add(f);
      expect(shipped.has(f), `${f} is loaded but not shipped`).toBe(true);
      const text = execFileSync('tar', ['-xzOf', TGZ, `package/${f}`], { encoding: 'utf8', maxBuffer: 1 << 28 });
      // Relative specifiers of import, export … from, import() and require(), and the healthcheck's path.join(__dirname, 'bundle', 'cli.js').
      const specs = [...text.matchAll(/(?:from|import|require)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1] as string);
      if (/path\.join\(__dirname, 'bundle', 'cli\.js'\)/.test(text)) specs.push('./bundle/cli.js');
      for (const spec of specs) queue.push(posix.normalize(posix.join(posix.dirname(f), spec)));
    }
    expect(reached.size).toBeGreaterThan(5);
    // build-info.json is read by path (--version, cbwatch_build_info); everything else under dist/ must be reached.
    expect(list.filter((f) => f.startsWith('dist/') && f !== 'dist/build-info.json' && !reached.has(f))).toEqual([]);
  });

  it('bundles its production dependencies, the versions of package-lock.json (an install asks the registry for nothing)', () => {
    const pkg = JSON.parse(execFileSync('tar', ['-xzOf', TGZ, 'package/package.json'], { encoding: 'utf8' })) as { dependencies: Record<string, string>; bundleDependencies?: string[] };
    expect(pkg.bundleDependencies?.slice().sort()).toEqual(Object.keys(pkg.dependencies).sort());
    const dir = join(tmp, 'unpacked');
    mkdirSync(dir, { recursive: true });
    execFileSync('tar', ['-xzf', TGZ, '-C', dir]);
    expect(Object.fromEntries(installedTree(join(dir, 'package')))).toEqual(Object.fromEntries(lockedProduction()));
  });

  it('carries an npm-shrinkwrap.json from package-lock.json: production packages only, the tested cookie (no EBADENGINE on Node 20)', () => {
    const wrap = JSON.parse(execFileSync('tar', ['-xzOf', TGZ, 'package/npm-shrinkwrap.json'], { encoding: 'utf8' })) as {
      lockfileVersion: number;
      packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } }>;
    };
    const lock = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package-lock.json'), 'utf8')) as typeof wrap;
    expect(wrap.lockfileVersion).toBe(lock.lockfileVersion);
    expect(Object.values(wrap.packages).filter((p) => p.dev)).toEqual([]);
    expect(wrap.packages['node_modules/vitest']).toBeUndefined();
    for (const [path, p] of Object.entries(wrap.packages)) if (path !== '') expect(p.version, path).toBe(lock.packages[path]?.version);
    // cookie 2 needs Node 22; the override in package.json pins light-my-request 6.6.0, whose cookie is 1.x.
    const cookies = Object.entries(wrap.packages).filter(([path]) => path.endsWith('node_modules/cookie'));
    expect(cookies.length).toBeGreaterThan(0);
    for (const [, c] of cookies) expect(c.version).toMatch(/^1\./);
  });

  it('records the revision it was built from', () => {
    const info = JSON.parse(execFileSync('tar', ['-xzOf', TGZ, 'package/dist/build-info.json'], { encoding: 'utf8' })) as Record<string, string>;
    if (head) expect(info.revision).toBe(head);
    expect(info.buildDate).toMatch(/^\d{8}-\d{2}:\d{2}:\d{2}$/);
  });

  it('installs globally into a fresh prefix, offline, with no warning (EBADENGINE on Node 20), as the tested tree, and runs outside any checkout: --version and demo', async () => {
    const prefix = join(tmp, 'prefix');
    // npm's own log level: its warnings are what is checked. --offline: the bundle needs no registry.
    const r = spawnSync('npm', ['install', '-g', '--prefix', prefix, TGZ, '--offline', '--no-audit', '--no-fund', '--no-update-notifier'], { cwd: tmp, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(npmWarnings(r.stdout + r.stderr), r.stderr).toEqual([]);
    expect(r.stderr).not.toMatch(/install-scripts|prepare/);
    expect(Object.fromEntries(installedTree(join(prefix, 'lib', 'node_modules', 'cbwatch')))).toEqual(Object.fromEntries(lockedProduction()));
    const bin = join(prefix, 'bin', 'cbwatch');
    const v = spawnSync(bin, ['--version'], { cwd: tmp, encoding: 'utf8' });
    expect(v.status, v.stderr).toBe(0);
    const lines = v.stdout.split('\n');
    expect(lines[0]).toMatch(VERSION_LINE);
    expect(v.stdout).toMatch(/^ {2}build date: {7}\d{8}-\d{2}:\d{2}:\d{2}$/m);
    expect(v.stdout).toContain(`  node version:     ${process.version}`);
    const metrics = await demoMetrics(bin, []);
    const rev = VERSION_LINE.exec(lines[0] as string)?.[1];
    expect(metrics).toContain(`cbwatch_build_info{version="${VERSION}",revision="${rev}",`);
  }, 180_000);

  it('installs locally into a project, offline, with no warning, as the tested tree', () => {
    const project = join(tmp, 'project');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'uses-cbwatch', version: '1.0.0', private: true }));
    const r = spawnSync('npm', ['install', TGZ, '--offline', '--no-audit', '--no-fund', '--no-update-notifier'], { cwd: project, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(npmWarnings(r.stdout + r.stderr), r.stderr).toEqual([]);
    const installed = installedTree(project);
    // The project's node_modules holds cbwatch and, inside it, the bundle; npm may hoist nothing out of a bundle.
    expect([...installed.keys()].filter((p) => !p.startsWith('node_modules/cbwatch'))).toEqual([]);
    expect(Object.fromEntries(installedTree(join(project, 'node_modules', 'cbwatch')))).toEqual(Object.fromEntries(lockedProduction()));
    const v = spawnSync(join(project, 'node_modules', '.bin', 'cbwatch'), ['--version'], { cwd: project, encoding: 'utf8' });
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout.split('\n')[0]).toMatch(VERSION_LINE);
  }, 120_000);
});

describe('the Debian package', () => {
  const field = (name: string): string => execFileSync('dpkg-deb', ['--field', DEB, name], { encoding: 'utf8' }).trim();
  const root = join(tmp, 'deb');
  const control = join(tmp, 'control');
  beforeAll(() => {
    execFileSync('dpkg-deb', ['-x', DEB, root]);
    execFileSync('dpkg-deb', ['-e', DEB, control]);
  });

  it('is cbwatch for amd64, needing adduser for its system user', () => {
    expect(field('Package')).toBe('cbwatch');
    expect(field('Version')).toBe(VERSION);
    expect(field('Architecture')).toBe('amd64');
    expect(field('Depends').split(/,\s*/)).toContain('adduser');
  });

  it('carries the launcher, Node 24, the systemd unit and a configuration directory whose example is a conffile', () => {
    for (const f of ['usr/bin/cbwatch', 'usr/lib/cbwatch/node/bin/node', 'usr/lib/cbwatch/bin/cbwatch.js', 'lib/systemd/system/cbwatch.service', 'etc/cbwatch/cbwatch.yml', 'usr/share/doc/cbwatch/copyright', 'usr/share/man/man1/cbwatch.1.gz']) {
      expect(existsSync(join(root, f)), f).toBe(true);
    }
    expect(readFileSync(join(control, 'conffiles'), 'utf8').trim()).toBe('/etc/cbwatch/cbwatch.yml');
  });

  it('creates the system user on install and keeps it on remove', () => {
    const postinst = readFileSync(join(control, 'postinst'), 'utf8');
    expect(postinst).toMatch(/adduser --system --group .*cbwatch/);
    // Debian keeps a package's system user on purge (files elsewhere may still belong to it): no maintainer
    // script runs deluser or userdel. Comments and the messages a script prints may name them (postrm's purge
    // says how to remove the user by hand), so the check reads the commands only: comment lines dropped, and
    // the text of quoted strings that run nothing (no $( ) or backticks) blanked.
    const commands = (script: string): string => {
      const code = script.split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
      let out = '';
      for (let i = 0; i < code.length; i++) {
        const q = code[i] as string;
        if (q !== '"' && q !== "'") {
          out += q;
          continue;
        }
        let j = i + 1;
        while (j < code.length && code[j] !== q) j += q === '"' && code[j] === '\\' ? 2 : 1;
        const body = code.slice(i + 1, j);
        out += q + (q === '"' && /\$\(|`/.test(body) ? body : '') + q;
        i = j;
      }
      return out;
    };
    for (const s of ['postinst', 'prerm', 'postrm']) expect(commands(readFileSync(join(control, s), 'utf8')), s).not.toMatch(/\b(deluser|userdel)\b/);
    expect(readFileSync(join(control, 'postrm'), 'utf8')).toMatch(/the system user cbwatch is kept/);
    const unit = readFileSync(join(root, 'lib/systemd/system/cbwatch.service'), 'utf8');
    expect(unit).toMatch(/^User=cbwatch$/m);
    expect(unit).not.toMatch(/^DynamicUser=/m);
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/cbwatch run --config \/etc\/cbwatch\/cbwatch\.yml$/m);
  });

  it('runs in place: the launcher starts cbwatch on its own Node 24 (--version and demo)', async () => {
    const launcher = join(root, 'usr/bin/cbwatch');
    const v = spawnSync(launcher, ['--version'], { cwd: tmp, encoding: 'utf8' });
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout.split('\n')[0]).toMatch(VERSION_LINE);
    expect(v.stdout).toMatch(/^ {2}node version: {5}v24\./m);
    const metrics = await demoMetrics(launcher, []);
    expect(metrics).toMatch(/^cbwatch_build_info\{.*nodejs_version="v24\./m);
  }, 120_000);

  it('its healthcheck probe runs on its own Node 24, outside any checkout (nothing listening: 1, naming the URL)', async () => {
    const { createServer } = await import('node:net');
    // A port that was free a moment ago and is closed now: nothing answers there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const node = join(root, 'usr/lib/cbwatch/node/bin/node');
    for (const argv of [['--jitless', join(root, 'usr/lib/cbwatch/dist/healthcheck.cjs')], [join(root, 'usr/lib/cbwatch/bin/cbwatch.js'), 'healthcheck']]) {
      const r = spawnSync(node, [...argv, '--web.listen-address', `127.0.0.1:${port}`], { cwd: tmp, encoding: 'utf8' });
      expect(r.status, argv.join(' ')).toBe(1);
      expect(r.stderr).toBe(`http://127.0.0.1:${port}/-/healthy: ECONNREFUSED\n`);
    }
  });

  it('behaves like a Debian package: no empty directory, no dangling link, no unused tsc output, docs in /usr/share/doc (issues 38, 39)', () => {
    const all = execFileSync('find', [root, '-mindepth', '1'], { encoding: 'utf8' }).trim().split('\n');
    const empty = execFileSync('find', [root, '-type', 'd', '-empty'], { encoding: 'utf8' }).trim();
    expect(empty).toBe('');
    const dangling = execFileSync('find', [root, '-xtype', 'l'], { encoding: 'utf8' }).trim();
    expect(dangling).toBe('');
    expect(existsSync(join(root, 'usr/lib/cbwatch/node_modules/.bin'))).toBe(false);
    const dist = execFileSync('ls', [join(root, 'usr/lib/cbwatch/dist')], { encoding: 'utf8' }).trim().split('\n');
    expect(dist.sort()).toEqual(['build-info.json', 'bundle', 'hangup.js', 'healthcheck.cjs']);
    // Regular files only: a link under /usr/lib/cbwatch to the page in /usr/share/doc keeps the page's path. The
    // dependencies' licence files stay beside their code; the fixtures' SOURCES.md are data the simulator reads.
    const docsOutside = all.filter(
      (f) =>
        /\.(md|markdown)$/i.test(f) &&
        !lstatSync(f).isSymbolicLink() &&
        !f.startsWith(join(root, 'usr/share/doc/')) &&
        !f.includes('/test/fixtures/') &&
        !(f.includes('/node_modules/') && /^licen[cs]e/i.test(basename(f))),
    );
    expect(docsOutside).toEqual([]);
    expect(existsSync(join(root, 'usr/share/doc/cbwatch/docs/configuration.md'))).toBe(true);
    expect(readFileSync(join(root, 'usr/lib/cbwatch/alerts/runbook.md'), 'utf8')).toMatch(/^# /m);
    expect(lstatSync(join(root, 'usr/share/doc/cbwatch/alerts/runbook.md')).isFile()).toBe(true);
  });

  it('sets /etc/cbwatch\'s mode on first install only, purges the password file it asked for, and hands systemd state to deb-systemd-helper', () => {
    const postinst = readFileSync(join(control, 'postinst'), 'utf8');
    expect(postinst).toMatch(/if \[ -z "\$2" \]; then\n\s+chmod 0755 \/etc\/cbwatch/);
    expect(postinst).toMatch(/deb-systemd-helper update-state cbwatch\.service/);
    const postrm = readFileSync(join(control, 'postrm'), 'utf8');
    expect(postrm).toMatch(/deb-systemd-helper purge cbwatch\.service/);
    expect(postrm).toMatch(/rm -f \/etc\/cbwatch\/couchbase-password/);
    const unit = readFileSync(join(root, 'lib/systemd/system/cbwatch.service'), 'utf8');
    // The reload needs no procps: the shell's kill.
    expect(unit.split('\n').filter((l) => !l.startsWith('#')).join('\n')).not.toMatch(/\/bin\/kill/);
    expect(unit).toMatch(/^ExecReload=\/bin\/sh -c 'kill -HUP \$\{MAINPID\}'$/m);
    expect(unit).toMatch(/^ExecStartPost=.*\/usr\/lib\/cbwatch\/dist\/healthcheck\.cjs/m);
  });

  it('checks /etc/cbwatch/cbwatch.yml from a shell: $CREDENTIALS_DIRECTORY, when unset, is /etc/cbwatch', () => {
    const launcher = readFileSync(join(root, 'usr/bin/cbwatch'), 'utf8');
    expect(launcher).toMatch(/export CREDENTIALS_DIRECTORY=\/etc\/cbwatch/);
  });

  const analyze = findBinary('systemd-analyze');
  it.skipIf(!analyze && process.env.CI !== 'true')('its systemd unit passes systemd-analyze verify with no warning', () => {
    const unit = readFileSync(join(root, 'lib/systemd/system/cbwatch.service'), 'utf8').replace('ExecStart=/usr/bin/cbwatch ', `ExecStart=${join(root, 'usr/bin/cbwatch')} `);
    const p = join(tmp, 'cbwatch.service');
    writeFileSync(p, unit);
    const r = spawnSync(analyze ?? 'systemd-analyze', ['verify', p], { encoding: 'utf8', cwd: tmp });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe('');
  });
});

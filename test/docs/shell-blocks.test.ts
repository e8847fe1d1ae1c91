/**
 * Issue 26, item 4: every ```sh block of README.md, docs/*.md, alerts/README.md and deploy/**\/README.md is
 * either run here — in a temporary directory, against the simulator, with the built CLI, with bounded time —
 * or listed in NOT_HERE with the reason it cannot run on this machine. A new block in neither set fails.
 *
 * How a block runs: `cbwatch` is the checkout's bin/cbwatch.js (a wrapper on PATH; no block may say `npx cbwatch`); a
 * long-running `cbwatch [run]` must still be running after a few seconds (then it is stopped: `timeout`'s 124
 * counts as success); example hosts, secrets and paths are replaced by the simulator's and by files in the
 * temporary directory (each runner lists its replacements). The `--config.check` sample output of
 * docs/configuration.md is compared with what the command prints for the example configuration shown there.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';

const ROOT = join(import.meta.dirname, '..', '..');

interface Block {
  readonly file: string;
  readonly line: number;
  readonly lang: string;
  readonly text: string;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

function blocksOf(file: string): Block[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const out: Block[] = [];
  for (const m of text.matchAll(/^( *)```(\w*)\n([\s\S]*?)^\1```/gm)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ file, line, lang: m[2] as string, text: (m[3] as string).replace(new RegExp(`^${m[1]}`, 'gm'), '') });
  }
  return out;
}

const FILES = [
  'README.md',
  'alerts/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((n) => n.endsWith('.md'))
    .map((n) => `docs/${n}`),
  ...walk(join(ROOT, 'deploy'))
    .filter((p) => p.endsWith('README.md'))
    .map((p) => relative(ROOT, p)),
];
const ALL = FILES.flatMap(blocksOf);
const SH = ALL.filter((b) => b.lang === 'sh' || b.lang === 'bash' || b.lang === 'shell');

/** A block's key: its file and first line. */
const key = (b: Block): string => `${b.file}: ${(b.text.split('\n')[0] ?? '').trim()}`;

/** Blocks that cannot run on this machine, and why (reviewed: keep it short). */
const NOT_HERE: Record<string, string> = {
  'README.md: npm install -g ./release/cbwatch-0.1.0.tgz && cbwatch --version && cbwatch demo':
    'installs globally on the machine from a release tarball and fetches its dependencies (test/release/ installs it into a throwaway prefix; the path is checked below)',
  'README.md: docker build --build-arg REVISION=$(git rev-parse HEAD) --build-arg CREATED=$(date -u +%FT%TZ) -t cbwatch .':
    'needs a Docker daemon (this machine has the client only) and node:24-bookworm-slim from a registry',
  'README.md: printf \'%s\' "$CB_PASSWORD" > cb-password && chmod 0400 cb-password && sudo chown 1000 cb-password': 'docker run needs a Docker daemon (none here) and the image above; and sudo',
  'README.md: podman load -i release/cbwatch-0.1.0-oci.tar        # Loaded image: localhost/cbwatch:0.1.0':
    'needs the image archive (sudo npm run release) and a running container with a real cluster; test/release/image.test.ts loads and runs the image in CI',
  'README.md: npm ci            # installs and builds (dist/)': 'the development loop itself (npm ci, npm test, bench); CI runs it as `bash .ci/run`',
  'alerts/README.md: promtool check rules /etc/prometheus/cbwatch.rules.yml':
    'the reload needs a running Prometheus; `promtool check rules` on the same file runs in the blocks below',
  'alerts/README.md: kubectl apply -n monitoring -f alerts/kubernetes/prometheusrule.yml': 'needs a Kubernetes cluster with the Prometheus operator',
  'docs/configuration.md: # a Read-Only Admin user (Couchbase CLI)': 'needs a real Couchbase Server and its couchbase-cli',
  'deploy/kubernetes/README.md: kubectl create namespace monitoring': 'needs a Kubernetes cluster (test/deploy/kubernetes.test.ts renders the kustomizations)',
};

let sim: Simulator;
let simUrl: string;
let work: string;
let binDir: string;
let caPem: string;

function wrapper(): string {
  const node = process.execPath;
  const cli = join(ROOT, 'bin', 'cbwatch.js');
  return `#!/bin/bash
# The checkout's CLI. \`run\` (the default command) serves until stopped: it must still run after 6 s.
case "$1" in check|demo|simulate|rules|healthcheck|help|version|--help|--version) exec "${node}" "${cli}" "$@";; esac
for a in "$@"; do [ "$a" = --config.check ] && exec "${node}" "${cli}" "$@"; done
timeout -s TERM 6 "${node}" "${cli}" "$@"
rc=$?
[ $rc = 124 ] && exit 0
echo "cbwatch $* exited $rc before it was stopped" >&2
exit 1
`;
}

beforeAll(async () => {
  sim = createSimulator();
  simUrl = await sim.listen(0);
  work = mkdtempSync(join(tmpdir(), 'cbw-shell-blocks-'));
  binDir = join(work, 'bin');
  mkdirSync(binDir);
  for (const name of ['cbwatch']) {
    writeFileSync(join(binDir, name), wrapper());
    chmodSync(join(binDir, name), 0o755);
  }
  caPem = join(work, 'ca.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=docs test CA', '-days', '2', '-keyout', join(work, 'ca.key'), '-out', caPem], { stdio: 'ignore' });
}, 60_000);
afterAll(async () => {
  await sim.close();
});

/** Replace each [from, to] in order. */
function sub(text: string, pairs: ReadonlyArray<readonly [string | RegExp, string]>): string {
  let t = text;
  for (const [from, to] of pairs) {
    const before = t;
    t = typeof from === 'string' ? t.split(from).join(to) : t.replace(from, to);
    if (t === before) throw new Error(`replacement ${String(from)} matched nothing: the doc changed, update the runner`);
  }
  return t;
}

async function sh(script: string, cwd: string, env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  // Asynchronous: the simulator answers from this process.
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
    cwd,
    env: { ...cleanEnv(), PATH: `${binDir}:${process.env.PATH ?? ''}`, CBWATCH_WEB_LISTEN_ADDRESS: '127.0.0.1:0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // A hang, not a slow machine (jsonnet building the mixin takes minutes on a loaded one): below the test's 600 s.
  const timer = setTimeout(() => child.kill('SIGKILL'), 540_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`exit ${code}:\n${script}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`);
  return { stdout, stderr };
}

function cleanEnv(): Record<string, string> {
  const e: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CBWATCH_') && v !== undefined) e[k] = v;
  return e;
}


/** The yaml block of `file` whose first line is `first`. */
function yamlBlock(file: string, first: string): string {
  const b = ALL.find((x) => x.file === file && x.lang === 'yaml' && x.text.startsWith(first));
  if (!b) throw new Error(`${file}: no yaml block starting ${first}`);
  return b.text;
}

/** docs/configuration.md's example configuration, its paths moved into `dir`. */
function docsConfig(dir: string): string {
  writeFileSync(join(dir, 'cb-prod-eu'), 'secret-eu\n', { mode: 0o600 });
  const cfg = join(dir, 'cbwatch.yml');
  writeFileSync(
    cfg,
    sub(yamlBlock('docs/configuration.md', '# /etc/cbwatch/cbwatch.yml'), [
      ['/run/secrets/cb-prod-eu', join(dir, 'cb-prod-eu')],
      ['/etc/cbwatch/prod-ca.pem', caPem],
    ]),
  );
  return cfg;
}

function fresh(name: string): string {
  const d = join(work, name);
  mkdirSync(d, { recursive: true });
  return d;
}

const RUN: Record<string, (b: Block) => Promise<void>> = {
  'README.md: export CBWATCH_COUCHBASE_PASSWORD=...            # never on the command line': async (b) => {
    const u = sim.ctx.options.users.admin;
    await sh(sub(b.text, [['CBWATCH_COUCHBASE_PASSWORD=...', `CBWATCH_COUCHBASE_PASSWORD=${u.password}`], ['https://cb1.example.com:18091', simUrl], ['--couchbase.username cbwatch', `--couchbase.username ${u.username}`]]), fresh('readme-check'));
  },
  'README.md: cbwatch run --config cbwatch.yml --config.check   # validate and exit (0 valid, 2 invalid)': async (b) => {
    const d = fresh('readme-config');
    writeFileSync(join(d, 'cb'), 'secret\n', { mode: 0o600 });
    writeFileSync(join(d, 'cbwatch.yml'), sub(yamlBlock('README.md', '# cbwatch.yml'), [['/run/secrets/cb', join(d, 'cb')], ['/etc/cbwatch/ca.pem', caPem]]));
    const { stdout } = await sh(b.text, d);
    expect(stdout).toContain('configuration is valid');
  },
  'README.md: npm ci && ./bin/cbwatch.js demo   # runs cbwatch against its built-in Couchbase simulator': async (b) => {
    // The Quick start in the checkout: `npm ci` already ran (it is how this suite got its packages; CI's .ci/run
    // runs the block's two commands as written on a clean clone) and `npm test` is this suite. The demo runs by
    // the launcher's path, with dist/ as built, and its hints name it so.
    const [first, second] = b.text.trim().split('\n');
    expect(second?.trim().startsWith('npm test')).toBe(true);
    const demo = sub(first ?? '', [['npm ci && ', ''], [/ +#.*$/, ''], ['./bin/cbwatch.js demo', 'timeout -s TERM 8 ./bin/cbwatch.js demo || [ $? = 124 ]']]);
    const { stdout } = await sh(demo, ROOT);
    expect(stdout).toMatch(/metrics: +http:\/\/127\.0\.0\.1:\d+\/metrics\n/);
    expect(stdout).toContain('./bin/cbwatch.js demo --with-prometheus');
    expect(stdout).not.toContain('npx');
  },
  'alerts/README.md: cbwatch rules \\': async (b) => {
    const d = fresh('alerts-rules');
    await sh(sub(b.text, [['/etc/prometheus/', `${d}/`]]), d);
    const rules = readFileSync(join(d, 'cbwatch.rules.yml'), 'utf8');
    expect(rules).toContain('job="cbwatch-prod"');
    expect(rules).toContain('alert: CouchbaseXdcrBacklogHigh');
    expect(rules).not.toContain('alert: CouchbaseUiOverHttpEnabled');
  },
  'alerts/README.md: mkdir -p out/dashboards                              # jsonnet -m writes into existing directories only': async (b) => {
    const d = fresh('alerts-jsonnet');
    mkdirSync(join(d, 'vendor'));
    symlinkSync(ROOT, join(d, 'vendor', 'cbwatch'));
    const mixin = ALL.find((x) => x.file === 'alerts/README.md' && x.lang === 'jsonnet');
    writeFileSync(join(d, 'cbwatch.jsonnet'), mixin?.text ?? '');
    await sh(b.text, d);
    expect(readFileSync(join(d, 'out', 'cbwatch.rules.yml'), 'utf8')).toContain('https://wiki.example.com/cbwatch/runbook#cbwatchexporterdown');
    expect(readdirSync(join(d, 'out', 'dashboards')).filter((n) => n.endsWith('.json')).length).toBeGreaterThan(0);
  },
  'alerts/README.md: promtool check rules alerts/cbwatch.rules.yml': async (b) => {
    // In the checkout; `npm run generate` would rewrite committed files during the test run: its --check
    // form (what CI runs) says whether they are what it would write.
    await sh(sub(b.text, [['npm run generate', `"${process.execPath}" dist/tools/generate.js --check`]]), ROOT);
  },
  'docs/configuration.md: cbwatch --config /etc/cbwatch/cbwatch.yml --config.check     # prints a summary; exit 0 valid, 2 invalid': async (b) => {
    const d = fresh('docs-check');
    const cfg = docsConfig(d);
    // The default listen address, as on the machine the sample describes.
    const { stdout } = await sh(sub(b.text, [['/etc/cbwatch/cbwatch.yml', cfg]]), d, { CB_PROD_US_PASSWORD: 'secret-us', CBWATCH_WEB_LISTEN_ADDRESS: '' });
    // The sample output that follows the block is what the command prints (paths put back, "…" elides).
    const sample = ALL.find((x) => x.file === b.file && x.line > b.line && x.lang === '');
    const real = stdout.split(cfg).join('/etc/cbwatch/cbwatch.yml').split(join(d, 'cb-prod-eu')).join('/run/secrets/cb-prod-eu').split(caPem).join('/etc/cbwatch/prod-ca.pem');
    expect(matchesSample(real, sample?.text ?? ''), `docs/configuration.md's --config.check sample differs from the real output:\n${real}`).toBe(true);
  },
  "docs/configuration.md: export CBWATCH_COUCHBASE_PASSWORD='…'          # or --couchbase.password-file /run/secrets/cb": async (b) => {
    // The simulator speaks plain http: the CA file is read and checked at start, not used for a handshake.
    const u = sim.ctx.options.users.admin;
    await sh(
      sub(b.text, [["CBWATCH_COUCHBASE_PASSWORD='…'", `CBWATCH_COUCHBASE_PASSWORD='${u.password}'`], ['https://cb1.example.com:18091', simUrl], ['--couchbase.username cbwatch', `--couchbase.username ${u.username}`], ['/etc/cbwatch/cluster-ca.pem', caPem]]),
      fresh('docs-single'),
    );
  },
  'docs/configuration.md: cbwatch --config /etc/cbwatch/cbwatch.yml': async (b) => {
    const d = fresh('docs-run');
    await sh(sub(b.text, [['/etc/cbwatch/cbwatch.yml', docsConfig(d)]]), d, { CB_PROD_US_PASSWORD: 'secret-us' });
  },
};

/**
 * A sample matches real output when its lines appear in order, a line `…` (indented or not) stands for any
 * number of lines, and a line ending in `, …` or `; …` for a line that starts with what precedes it.
 */
export function matchesSample(real: string, sample: string): boolean {
  const r = real.replace(/\n+$/, '').split('\n');
  const s = sample.replace(/\n+$/, '').split('\n');
  const go = (i: number, j: number): boolean => {
    if (j === s.length) return i === r.length;
    const want = s[j] as string;
    if (want.trim() === '…') {
      for (let k = i; k <= r.length; k++) if (go(k, j + 1)) return true;
      return false;
    }
    if (i >= r.length) return false;
    const got = r[i] as string;
    const prefix = /^(.*[,;]) …$/.exec(want)?.[1];
    const ok = prefix !== undefined ? got.startsWith(prefix) : got === want;
    return ok && go(i + 1, j + 1);
  };
  return go(0, 0);
}

describe('shell commands of README.md and docs', () => {
  it('every sh block is run here or listed in NOT_HERE with a reason; neither list holds a stale entry', () => {
    const keys = SH.map(key);
    const unknown = keys.filter((k) => RUN[k] === undefined && NOT_HERE[k] === undefined);
    expect(unknown, 'new sh blocks: run them in RUN or say in NOT_HERE why they cannot run').toEqual([]);
    for (const k of [...Object.keys(RUN), ...Object.keys(NOT_HERE)]) expect(keys, `stale entry ${k}`).toContain(k);
    for (const k of Object.keys(NOT_HERE)) expect(RUN[k], k).toBeUndefined();
    expect(Object.keys(NOT_HERE).length).toBeLessThanOrEqual(10);
  });

  it('README installs the tarball from where packaging/release.sh writes it', () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const release = readFileSync(join(ROOT, 'packaging', 'release.sh'), 'utf8');
    expect(release).toMatch(/^OUT=\$ROOT\/release$/m);
    expect(release).toMatch(/^TGZ=\$OUT\/cbwatch-\$VERSION\.tgz$/m);
    const block = SH.find((x) => x.file === 'README.md' && x.text.startsWith('npm install -g'));
    expect(block?.text).toContain(`npm install -g ./release/cbwatch-${version}.tgz `);
  });

  it('no block runs `npx cbwatch` (the npm name is not this project\'s)', () => {
    for (const b of SH) expect(b.text, key(b)).not.toMatch(/\bnpx cbwatch\b/);
  });

  it('matchesSample: elisions and exact lines', () => {
    expect(matchesSample('a\nb\nc\nd\n', 'a\n…\nd\n')).toBe(true);
    expect(matchesSample('a\nb, c, d\n', 'a\nb, …\n')).toBe(true);
    expect(matchesSample('a\nb\n', 'a\nc\n')).toBe(false);
    expect(matchesSample('a\nb\nx\n', 'a\n…\nd\n')).toBe(false);
  });

  for (const b of SH.filter((x) => RUN[key(x)] !== undefined)) {
    it.skipIf(b.text.includes('promtool') && !existsSync('/usr/bin/promtool'))(`${b.file}:${b.line} runs`, () => (RUN[key(b)] as (b: Block) => Promise<void>)(b), 600_000);
  }
});

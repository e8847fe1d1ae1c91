/**
 * The OCI image archive (release/cbwatch-<version>-oci.tar, packaging/image.sh): its layout, configuration and
 * annotations read as files, SHA256SUMS, and the image run with Debian's podman, `cbwatch demo` (no address given)
 * scraped from this side through the port published with `-p`, and the image's health-check command run in the
 * container.
 *
 * Where podman cannot start a container as it is, two fallbacks, said in the test's output:
 *  - "podman (sandbox)": podman run inside a private mount namespace without the cgroup2 mount of a hybrid
 *    cgroup layout (crun refuses one whose cgroup2 has a controller), with --cgroups=disabled and ulimits no
 *    higher than podman's own (crun cannot raise them without CAP_SYS_RESOURCE). This is what the CI machine needs.
 *  - "chroot": the image's root unpacked with `umoci unpack` and run with chroot as the image's user, with the
 *    image's environment, entrypoint and health-check command: the same files and configuration, no container.
 * Slow (the image build copies a 200 MB root and compresses it; podman loads it) and root-only: one of
 * `npm run test:e2e`'s files, which skips unless CBWATCH_IMAGE=1 (.ci/run sets it; the run's global setup builds
 * release/ and the minbase root first).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { startDemo } from '../helpers/demo-run.js';
import { findBinary } from '../helpers/tools.js';

const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const OUT = join(PACKAGE_ROOT, 'release');
const DEB = join(OUT, `cbwatch_${VERSION}_amd64.deb`);
const IMAGE = join(OUT, `cbwatch-${VERSION}-oci.tar`);
const enabled = process.env.CBWATCH_IMAGE === '1';
const HEALTH = ['/usr/lib/cbwatch/node/bin/node', '--jitless', '/usr/lib/cbwatch/dist/healthcheck.cjs'];

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}
interface ImageConfig {
  created: string;
  architecture: string;
  os: string;
  config: {
    User: string;
    Env: string[];
    Entrypoint: string[];
    Cmd: string[];
    ExposedPorts: Record<string, object>;
    Labels: Record<string, string>;
    Healthcheck?: { Test: string[]; Interval: number; Timeout: number; StartPeriod: number; Retries: number };
  };
  rootfs: { diff_ids: string[] };
}

/**
 * A TCP port free on this machine's loopback now, for podman to publish the container's 9420 on, chosen below
 * Linux's ephemeral range (32768–60999), from which every `listen(0)` of the other tests draws. Podman's port
 * forwarding is a DNAT rule for 127.0.0.1:PORT; where its teardown fails (a sandboxed run), the rule outlives the
 * container, and a later test listening on that port would see its loopback connections sent to the dead
 * container (connect EHOSTUNREACH).
 */
async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(candidate, '127.0.0.1', () => resolve(true));
    });
    if (ok) {
      await new Promise((resolve) => server.close(resolve));
      return candidate;
    }
  }
  throw new Error('no free port between 20000 and 32000 on 127.0.0.1');
}

/** An IPv4 address of this machine that is not the loopback, if it has one. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
}

/** The revision the .deb was built from (its dist/build-info.json), read with dpkg-deb and tar. */
function debRevision(): string {
  const tar = execFileSync('dpkg-deb', ['--fsys-tarfile', DEB], { maxBuffer: 1 << 30 });
  const info = execFileSync('tar', ['-xO', './usr/lib/cbwatch/dist/build-info.json'], { input: tar, encoding: 'utf8' });
  return (JSON.parse(info) as { revision: string }).revision;
}

describe.skipIf(!enabled)('the OCI image archive', () => {
  let tmp = '';
  let layout = '';
  let index: { manifests: Descriptor[] } = { manifests: [] };
  let manifest: { config: Descriptor; layers: Descriptor[]; annotations: Record<string, string> } = { config: { mediaType: '', digest: '', size: 0 }, layers: [], annotations: {} };
  let config = {} as ImageConfig;
  let revision = '';
  const blob = (d: string): string => join(layout, 'blobs', ...d.split(':'));
  const json = <T>(d: string): T => JSON.parse(readFileSync(blob(d), 'utf8')) as T;

  beforeAll(() => {
    if (!existsSync(DEB)) throw new Error(`${DEB} is missing: npm run release (or npm test) builds it`);
    revision = debRevision();
    tmp = mkdtempSync(join(tmpdir(), 'cbwatch-image-'));
    const labelOf = (): string | undefined => {
      if (!existsSync(IMAGE)) return undefined;
      const idx = JSON.parse(execFileSync('tar', ['-xOf', IMAGE, 'index.json'], { encoding: 'utf8' })) as { manifests: Descriptor[] };
      const m = JSON.parse(execFileSync('tar', ['-xOf', IMAGE, `blobs/sha256/${idx.manifests[0]?.digest.slice(7)}`], { encoding: 'utf8' })) as { annotations?: Record<string, string> };
      return m.annotations?.['org.opencontainers.image.revision'];
    };
    if (labelOf() !== revision) {
      const t0 = process.hrtime.bigint();
      execFileSync('bash', [join(PACKAGE_ROOT, 'packaging', 'image.sh')], { cwd: PACKAGE_ROOT, stdio: 'inherit' });
      console.log(`packaging/image.sh: ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)} s`);
    }
    layout = join(tmp, 'layout');
    execFileSync('mkdir', ['-p', layout]);
    execFileSync('tar', ['-xf', IMAGE, '-C', layout]);
    index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as typeof index;
    manifest = json<typeof manifest>(index.manifests[0]?.digest ?? '');
    config = json<ImageConfig>(manifest.config.digest);
  }, 900_000);
  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('is an OCI image layout: one manifest, each blob matching its digest and size', () => {
    expect(JSON.parse(readFileSync(join(layout, 'oci-layout'), 'utf8'))).toEqual({ imageLayoutVersion: '1.0.0' });
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests[0]?.mediaType).toBe('application/vnd.oci.image.manifest.v1+json');
    expect(index.manifests[0]?.annotations?.['org.opencontainers.image.ref.name']).toBe(VERSION);
    expect(manifest.config.mediaType).toBe('application/vnd.oci.image.config.v1+json');
    expect(manifest.layers.map((l) => l.mediaType)).toEqual(['application/vnd.oci.image.layer.v1.tar+gzip']);
    for (const d of [index.manifests[0] as Descriptor, manifest.config, ...manifest.layers]) {
      const bytes = readFileSync(blob(d.digest));
      expect(bytes.length, d.digest).toBe(d.size);
      expect(`sha256:${createHash('sha256').update(bytes).digest('hex')}`).toBe(d.digest);
    }
    expect(config.architecture).toBe('amd64');
    expect(config.os).toBe('linux');
  });

  it('carries the OCI annotations as labels and manifest annotations: version, the .deb\'s revision, created, source, licenses, title, description', () => {
    const want = {
      'org.opencontainers.image.title': 'cbwatch',
      'org.opencontainers.image.description': 'Prometheus exporter and alerting kit for Couchbase Server',
      'org.opencontainers.image.version': VERSION,
      'org.opencontainers.image.revision': revision,
      'org.opencontainers.image.source': 'https://github.com/cbwatch/cbwatch',
      'org.opencontainers.image.licenses': 'Apache-2.0',
    };
    expect(revision).toMatch(/^[0-9a-f]{40}$/);
    expect(config.config.Labels).toMatchObject(want);
    expect(manifest.annotations).toMatchObject(want);
    // RFC 3339, as the annotation's definition asks, and the configuration's own creation time.
    expect(config.config.Labels['org.opencontainers.image.created']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(manifest.annotations['org.opencontainers.image.created']).toBe(config.config.Labels['org.opencontainers.image.created']);
    expect(config.created).toBe(config.config.Labels['org.opencontainers.image.created']);
  });

  it('runs /usr/bin/cbwatch as the system user cbwatch (numeric, not root), port 9420 on every address (the demo too), secrets in /run/secrets', () => {
    const passwd = execFileSync('tar', ['-xzOf', blob(manifest.layers[0]?.digest ?? ''), 'etc/passwd'], { encoding: 'utf8' });
    const line = passwd.split('\n').find((l) => l.startsWith('cbwatch:'));
    expect(line, passwd).toBeDefined();
    const [, , uid, gid] = (line as string).split(':');
    expect(config.config.User).toBe(`${uid}:${gid}`);
    expect(Number(uid)).toBeGreaterThan(0);
    expect(config.config.Entrypoint).toEqual(['/usr/bin/cbwatch']);
    expect(config.config.Cmd).toEqual(['run', '--config', '/etc/cbwatch/cbwatch.yml']);
    expect(Object.keys(config.config.ExposedPorts)).toEqual(['9420/tcp']);
    expect(config.config.Env).toContain('CREDENTIALS_DIRECTORY=/run/secrets');
    // The demo's own default is 127.0.0.1:9420, which `-p 9420:9420` cannot reach inside a container.
    expect(config.config.Env).toContain('CBWATCH_WEB_LISTEN_ADDRESS=:9420');
  });

  it('declares the light health check as Docker does (Healthcheck in the configuration) and as a label', () => {
    expect(config.config.Healthcheck).toEqual({ Test: ['CMD', ...HEALTH], Interval: 30e9, Timeout: 5e9, StartPeriod: 20e9, Retries: 3 });
    expect(config.config.Labels['io.github.cbwatch.healthcheck']).toBe(HEALTH.join(' '));
  });

  it('is listed in release/SHA256SUMS, which matches every artefact', () => {
    const names = readFileSync(join(OUT, 'SHA256SUMS'), 'utf8').trim().split('\n').map((l) => l.split(/\s+/)[1]);
    expect(names).toEqual([`cbwatch-${VERSION}.tgz`, `cbwatch_${VERSION}_amd64.deb`, `cbwatch-${VERSION}-oci.tar`]);
    const r = spawnSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: OUT, encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it('runs: cbwatch demo in the image, with no address given, answers /metrics on the port published with -p, and the health-check command answers 0', async () => {
    const env = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', LANG: 'C' };
    const podman = findBinary('podman');
    const store = join(tmp, 'podman');
    const P = ['--root', join(store, 'root'), '--runroot', join(store, 'run')];
    const name = `cbwatch-image-test-${process.pid}`;
    const imageRef = `localhost/cbwatch:${VERSION}`;
    // `-p 127.0.0.1:<port>:9420`, as a user publishes the port (on this side's loopback only, a free port).
    const published = await freePort();
    // The runners, each a way to put a command in front of an argv for the image, tried in order. `reach`: the
    // demo's /metrics as this side reaches it (undefined: the URL the demo prints).
    type Runner = { label: string; run: (args: string[]) => [string, string[]]; exec: (cmd: string[]) => [string, string[]]; reach?: string };
    const runners: Runner[] = [];
    // CBWATCH_IMAGE_RUNNER=chroot skips podman (to try the fallback where podman works).
    if (podman && process.env.CBWATCH_IMAGE_RUNNER !== 'chroot') {
      const load = spawnSync(podman, [...P, 'load', '-i', IMAGE], { encoding: 'utf8', env });
      expect(load.status, load.stdout + load.stderr).toBe(0);
      expect(load.stdout).toContain(`Loaded image: ${imageRef}`);
      // The container's own network, its port 9420 published: what `podman run -p` does on an ordinary host.
      const base = (extra: string[], args: string[]): string[] => [...P, 'run', '--rm', '--name', name, '-p', `127.0.0.1:${published}:9420`, ...extra, imageRef, ...args];
      const reach = `http://127.0.0.1:${published}/metrics`;
      runners.push({ label: 'podman', run: (args) => [podman, base([], args)], exec: (cmd) => [podman, [...P, 'exec', name, ...cmd]], reach });
      // The hard limits of this process (podman raises its open files to that, and lowers its processes to 32768).
      const limit = (what: string): number => {
        const m = new RegExp(`^Max ${what}\\s+\\S+\\s+(\\d+|unlimited)`, 'm').exec(readFileSync('/proc/self/limits', 'utf8'));
        return m?.[1] === undefined || m[1] === 'unlimited' ? Infinity : Number(m[1]);
      };
      const nofile = Math.min(limit('open files'), 1048576);
      const nproc = Math.min(limit('processes'), 32768);
      const sandbox = ['--cgroups=disabled', '--ulimit', `nofile=${nofile}:${nofile}`, '--ulimit', `nproc=${nproc}:${nproc}`];
      const wrap = (argv: string[]): [string, string[]] => [
        'unshare',
        ['--mount', '--propagation', 'private', 'sh', '-c', 'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"', 'sh', podman, ...argv],
      ];
      runners.push({ label: 'podman (sandbox)', run: (args) => wrap(base(sandbox, args)), exec: (cmd) => wrap([...P, 'exec', name, ...cmd]), reach });
    }
    // The chroot fallback: the image's root, its user, environment and entrypoint. No network of its own, so no
    // port to publish: the image's listen address keeps its host (every address) with a free port instead of 9420,
    // and this side scrapes it through an address that is not the loopback, when the machine has one.
    const bundle = join(tmp, 'bundle');
    const chrootRunner = (): Runner => {
      if (!existsSync(join(bundle, 'rootfs'))) execFileSync('umoci', ['unpack', '--image', `${layout}:${VERSION}`, bundle], { stdio: 'ignore' });
      const rootfs = join(bundle, 'rootfs');
      const envv = config.config.Env.map((e) => (e === 'CBWATCH_WEB_LISTEN_ADDRESS=:9420' ? `CBWATCH_WEB_LISTEN_ADDRESS=:${published}` : e));
      const inRoot = (cmd: string[]): [string, string[]] => ['chroot', [`--userspec=${config.config.User}`, rootfs, '/usr/bin/env', '-i', ...envv, ...cmd]];
      const outside = outsideAddress();
      console.log(`chroot: no container network, so no published port; the demo is scraped on ${outside ?? 'the loopback (this machine has no other address)'}:${published}`);
      return { label: 'chroot', run: (args) => inRoot([...config.config.Entrypoint, ...args]), exec: inRoot, reach: `http://${outside ?? '127.0.0.1'}:${published}/metrics` };
    };
    let runner: Runner | undefined;
    for (const r of runners) {
      const [cmd, argv] = r.run(['--version']);
      const v = spawnSync(cmd, argv, { encoding: 'utf8', env });
      if (v.status === 0 && v.stdout.startsWith(`cbwatch, version ${VERSION} `)) {
        runner = r;
        break;
      }
      console.log(`${r.label} cannot run the image here: ${(v.stderr || v.stdout).trim().split('\n').pop()}`);
    }
    runner ??= chrootRunner();
    console.log(`the image runs with: ${runner.label}`);

    // `demo` with no address: the image's CBWATCH_WEB_LISTEN_ADDRESS, not the demo's 127.0.0.1:9420.
    const [cmd, argv] = runner.run(['demo']);
    const demo = startDemo(cmd, argv, { ...env, CBWATCH_LOG_LEVEL: 'warn' });
    try {
      const { text, url } = await demo.untilUp(runner.reach);
      const { out, err } = demo.output();
      expect(url).toBe(runner.reach);
      expect(text, `${runner.label}: ${url}\nstdout:\n${out}\nstderr:\n${err}`).toMatch(/^couchbase_up\{couchbase_cluster="demo"\} 1$/m);
      expect(text).toMatch(new RegExp(`^cbwatch_build_info\\{version="${VERSION.replace(/\./g, '\\.')}",revision="${revision}",.*nodejs_version="v24\\.`, 'm'));
      // The image's health-check command, beside the daemon, with no flag: it finds it through the same environment.
      const [hc, hcArgv] = runner.exec(HEALTH);
      const h = spawnSync(hc, hcArgv, { encoding: 'utf8', env });
      expect(h.status, h.stdout + h.stderr).toBe(0);
    } finally {
      const code = await demo.stop();
      // The container's network is torn down with it (its port forwarding rule removed) even where --rm's own
      // cleanup did not run; then the image goes.
      if (runners.length > 0) spawnSync(podman as string, [...P, 'rm', '-f', '-i', name], { env, stdio: 'ignore' });
      if (runners.length > 0) spawnSync(podman as string, [...P, 'rmi', '-af'], { env, stdio: 'ignore' });
      expect(code, `${runner.label}\nstderr:\n${demo.output().err}`).toBe(0);
    }
  }, 300_000);
});

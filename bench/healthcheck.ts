/**
 * The Docker HEALTHCHECK's cost (issue 26): CPU time and peak RSS of one probe, each probe a process of its own
 * measured by GNU time (`/usr/bin/time -f`, from its rusage), against a running daemon (`cbwatch run` polling
 * `cbwatch simulate`, on free loopback ports). Rows:
 *  - `node --jitless dist/healthcheck.cjs`: the image's HEALTHCHECK (a CommonJS entry, no ES module loader), and
 *    the same without the flag; both again against a second daemon serving TLS from a web config file (with
 *    a self-signed certificate from openssl);
 *  - `node bin/cbwatch.js healthcheck`: the command, through the launcher's light path;
 *  - the full CLI's healthcheck (dist/cli.js imported, as `cbwatch healthcheck` did before the light path), and
 *    with BENCH_HEALTHCHECK_BEFORE=/path/to/bin/cbwatch.js another build's launcher (the previous release);
 *  - Node's own floor: an empty script, and a bare CommonJS `http.get` of /-/healthy (node:http loaded).
 * BENCH_HEALTHCHECK_RUNS (default 30) probes per row; BENCH_HEALTHCHECK_NODE, the node binary that runs them
 * (default this one's). `node bench/out/bench/healthcheck.js` prints the section.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, ROOT, freePort, startProcess, stop, waitFor } from './common.js';

const GNU_TIME = '/usr/bin/time';

export interface ProbeRow {
  readonly label: string;
  readonly command: string;
  readonly runs: number;
  /** Runs that did not exit 0 (every row asks a healthy daemon, so this should be 0). */
  readonly failed: number;
  /** CPU (user + system) per probe, ms: mean, median, max. */
  readonly cpuMeanMs: number;
  readonly cpuMedianMs: number;
  readonly cpuMaxMs: number;
  /** Peak RSS per probe, MB (2^20 bytes): median and max. */
  readonly rssMedianMB: number;
  readonly rssMaxMB: number;
  /** Wall time per probe, ms (mean). */
  readonly wallMeanMs: number;
}

export interface HealthcheckFigures {
  readonly at: string;
  readonly load: number;
  readonly cores: number;
  readonly node: string;
  readonly rows: readonly ProbeRow[];
}

/** One process under GNU time: its exit code, CPU seconds, peak RSS (kB) and wall seconds. */
function timed(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number; cpuS: number; rssKB: number; wallS: number }> {
  return new Promise((resolve, reject) => {
    // The figures go to a line of their own at the end of stderr (-f's format), after anything the probe wrote.
    const child = spawn(GNU_TIME, ['-f', '\n@@ %x %U %S %M %e', ...argv], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => void (err += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const m = /@@ (\d+) ([\d.]+) ([\d.]+) (\d+) ([\d.]+)\s*$/.exec(err);
      if (!m) return reject(new Error(`no figures from ${GNU_TIME}: ${err.slice(-300)}`));
      resolve({ code: Number(m[1]), cpuS: Number(m[2]) + Number(m[3]), rssKB: Number(m[4]), wallS: Number(m[5]) });
    });
  });
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

async function row(label: string, argv: readonly string[], runs: number, env: NodeJS.ProcessEnv): Promise<ProbeRow> {
  // Two unmeasured runs first: the page cache holds the files, as it does for a probe every 30 s.
  for (let i = 0; i < 2; i++) await timed(argv, env);
  const r: { code: number; cpuS: number; rssKB: number; wallS: number }[] = [];
  for (let i = 0; i < runs; i++) r.push(await timed(argv, env));
  const cpu = r.map((x) => x.cpuS * 1000);
  const rss = r.map((x) => x.rssKB / 1024);
  return {
    label,
    command: argv.map((a) => (a.includes(' ') ? JSON.stringify(a) : a)).join(' ').replaceAll(ROOT + '/', ''),
    runs,
    failed: r.filter((x) => x.code !== 0).length,
    cpuMeanMs: mean(cpu),
    cpuMedianMs: median(cpu),
    cpuMaxMs: Math.max(...cpu),
    rssMedianMB: median(rss),
    rssMaxMB: Math.max(...rss),
    wallMeanMs: mean(r.map((x) => x.wallS * 1000)),
  };
}

/** The Node flags of the Dockerfile's HEALTHCHECK (test/deploy/dockerfile.test.ts holds the two together). */
export const IMAGE_FLAGS = ['--jitless'];

/** A second daemon serving TLS with a self-signed certificate (openssl), or undefined without openssl. */
async function tlsDaemon(sim: string, children: ChildProcess[], dir: string): Promise<{ listen: string; webConfig: string } | undefined> {
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'tls.key', '-out', 'tls.crt', '-days', '2', '-subj', '/CN=cbwatch.example.com'], {
      cwd: dir,
      stdio: 'ignore',
    });
  } catch {
    return undefined;
  }
  const webConfig = join(dir, 'web.yml');
  writeFileSync(webConfig, 'tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n');
  const listen = `127.0.0.1:${await freePort()}`;
  children.push(
    startProcess(['run', '--couchbase.url', sim, '--couchbase.username', 'Administrator', '--web.listen-address', listen, '--web.config.file', webConfig, '--log.level', 'warn'], {
      CBWATCH_COUCHBASE_PASSWORD: 'password',
    }),
  );
  // The self-signed certificate is not verified: this asks the bench's own daemon on the loopback.
  const { request } = await import('node:https');
  const healthy = (): Promise<true | undefined> =>
    new Promise((resolve) => {
      request(`https://${listen}/-/healthy`, { rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve(res.statusCode === 200 ? true : undefined);
      })
        .on('error', () => resolve(undefined))
        .end();
    });
  await waitFor('TLS exporter healthy', healthy, 120_000);
  return { listen, webConfig };
}

export async function benchHealthcheck(runs = Number(process.env.BENCH_HEALTHCHECK_RUNS ?? 30)): Promise<HealthcheckFigures> {
  if (!existsSync(GNU_TIME)) throw new Error(`${GNU_TIME} (Debian's "time" package) is needed to measure a probe's CPU and peak RSS`);
  const load = loadavg()[0] ?? 0;
  const children: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-bench-hc-'));
  try {
    const simPort = await freePort();
    children.push(startProcess(['simulate', '--port', String(simPort)]));
    const sim = `http://127.0.0.1:${simPort}`;
    await waitFor('simulator', async () => ((await fetch(`${sim}/pools`)).status < 500 ? true : undefined));
    const port = await freePort();
    const listen = `127.0.0.1:${port}`;
    children.push(
      startProcess(['run', '--couchbase.url', sim, '--couchbase.username', 'Administrator', '--web.listen-address', listen, '--log.level', 'warn'], {
        CBWATCH_COUCHBASE_PASSWORD: 'password',
      }),
    );
    await waitFor('exporter healthy', async () => ((await fetch(`http://${listen}/-/healthy`)).status === 200 ? true : undefined), 120_000);
    // As in the image: the listen address from the environment, no flags.
    const env = { ...process.env, CBWATCH_WEB_LISTEN_ADDRESS: listen };
    // The image runs Node 24: BENCH_HEALTHCHECK_NODE=$(scripts/node24.sh) measures the probes with it.
    const node = process.env.BENCH_HEALTHCHECK_NODE ?? process.execPath;
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    const before = process.env.BENCH_HEALTHCHECK_BEFORE;
    const cliUrl = pathToFileURL(join(ROOT, 'dist', 'cli.js')).href;
    const bareGet = `require('node:http').get('http://${listen}/-/healthy', (r) => { r.resume(); r.on('end', () => { process.exitCode = r.statusCode === 200 ? 0 : 1; }); })`;
    const entry = join(ROOT, 'dist', 'healthcheck.cjs');
    const rows: ProbeRow[] = [];
    rows.push(await row(`the image's HEALTHCHECK: \`node ${IMAGE_FLAGS.join(' ')} dist/healthcheck.cjs\``, [node, ...IMAGE_FLAGS, entry], runs, env));
    rows.push(await row('the same without Node flags: `node dist/healthcheck.cjs`', [node, entry], runs, env));
    const tls = await tlsDaemon(sim, children, dir);
    if (tls !== undefined) {
      const tlsEnv = { ...env, CBWATCH_WEB_LISTEN_ADDRESS: tls.listen, CBWATCH_WEB_CONFIG_FILE: tls.webConfig };
      rows.push(await row(`TLS (a web config file: the yaml package and node:tls): \`node ${IMAGE_FLAGS.join(' ')} dist/healthcheck.cjs\``, [node, ...IMAGE_FLAGS, entry], runs, tlsEnv));
      rows.push(await row('TLS without Node flags: `node dist/healthcheck.cjs`', [node, entry], runs, tlsEnv));
    }
    rows.push(await row('`cbwatch healthcheck` (the launcher\'s light path)', [node, CLI, 'healthcheck'], runs, env));
    rows.push(await row('the full CLI\'s healthcheck (dist/cli.js loaded, as `cbwatch healthcheck` did before)', [node, '--input-type=module', '-e', `process.exitCode = await (await import('${cliUrl}')).main(['healthcheck'])`], runs, env));
    if (before !== undefined) rows.push(await row(`before: \`${before} healthcheck\``, [node, before, 'healthcheck'], runs, env));
    if (before !== undefined && tls !== undefined) {
      rows.push(await row(`before, TLS: \`${before} healthcheck\``, [node, before, 'healthcheck'], runs, { ...env, CBWATCH_WEB_LISTEN_ADDRESS: tls.listen, CBWATCH_WEB_CONFIG_FILE: tls.webConfig }));
    }
    rows.push(await row('floor: Node, an empty script', [node, '-e', ''], runs, env));
    rows.push(await row('floor: Node, a bare `http.get` of /-/healthy', [node, '-e', bareGet], runs, env));
    return { at: new Date().toISOString().slice(0, 16).replace('T', ' '), load, cores: cpus().length, node: version, rows };
  } finally {
    for (const c of children.reverse()) await stop(c);
    rmSync(dir, { recursive: true, force: true });
  }
}

const f1 = (n: number): string => n.toFixed(1);

/** The bench section's lines. */
export function healthcheckLines(f: HealthcheckFigures): string[] {
  return [
    '## Docker HEALTHCHECK probe (bench/healthcheck.ts)',
    '',
    `Measured ${f.at} UTC with Node ${f.node}; load average ${f1(f.load)} on ${f.cores} cores at the start. Each probe is a process of its own, measured by GNU time (rusage): CPU is user + system time, RSS the peak resident set (MB of 2^20 bytes), against a running \`cbwatch run\` whose listen address comes from CBWATCH_WEB_LISTEN_ADDRESS, as in the image. Target (issue 26): under 50 ms of CPU and under 45 MB.`,
    '',
    '| probe | runs (failed) | CPU mean / median / max | peak RSS median / max | wall mean |',
    '|---|---|---|---|---|',
    ...f.rows.map((r) => `| ${r.label} | ${r.runs} (${r.failed}) | ${f1(r.cpuMeanMs)} / ${f1(r.cpuMedianMs)} / ${f1(r.cpuMaxMs)} ms | ${f1(r.rssMedianMB)} / ${f1(r.rssMaxMB)} MB | ${f1(r.wallMeanMs)} ms |`),
    '',
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchHealthcheck().then(
    (f) => process.stdout.write(`${healthcheckLines(f).join('\n')}\n`),
    (err: unknown) => {
      process.stderr.write(`bench healthcheck failed: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}

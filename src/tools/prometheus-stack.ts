/**
 * A throw-away Prometheus + Alertmanager pair from the system packages (Debian's `prometheus` and
 * `prometheus-alertmanager`), scraping one cbwatch and loading a rules file. Used by `cbwatch demo
 * --with-prometheus` and by the end-to-end alerting test. Everything lives in `dataDir`; both processes
 * listen on 127.0.0.1 on free ports; Alertmanager runs without clustering (no gossip port).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../paths.js';
import { yamlText } from './gen-alerts.js';

export interface PrometheusStackOptions {
  /** Base URL of the cbwatch to scrape (its /metrics). */
  readonly exporterUrl: string;
  /** The path that serves its metrics (--web.telemetry-path), under exporterUrl's path; default /metrics. */
  readonly metricsPath?: string;
  /** A Prometheus rules file; default: the package's alerts/cbwatch.rules.yml. */
  readonly rulesFile?: string;
  /** Where configs and storage go; created if missing. Default: a temporary directory removed by stop(). */
  readonly dataDir?: string;
  /** Scrape and rule evaluation interval, default 15s (tests use 1s). */
  readonly scrapeInterval?: string;
  readonly evaluationInterval?: string;
  /** Scrape job name; CbwatchExporterDown selects job=~"cbwatch.*". Default `cbwatch`. */
  readonly jobName?: string;
  /** Alertmanager webhook receiver for every alert; default: none (alerts only visible in its UI/API). */
  readonly webhookUrl?: string;
  /** Alertmanager grouping waits, default 10s / 10s (tests use 1s). */
  readonly groupWait?: string;
  readonly groupInterval?: string;
  readonly prometheusBin?: string;
  readonly alertmanagerBin?: string;
  /**
   * The whole Prometheus configuration instead of the generated one (one cbwatch job and `rulesFile`), given the
   * Alertmanager address to send alerts to. The native-metrics end-to-end test runs the documented example.
   */
  readonly prometheusConfig?: (alertmanager: string) => string;
  /** Ports on 127.0.0.1; default: free ones (0 also means a free one). */
  readonly prometheusPort?: number;
  readonly alertmanagerPort?: number;
  /** Milliseconds to wait for both to answer /-/ready. Default 30 s. */
  readonly startTimeoutMs?: number;
}

export interface PrometheusStack {
  readonly prometheusUrl: string;
  readonly alertmanagerUrl: string;
  /** The last lines each process wrote (for error messages). */
  logs(): { prometheus: string; alertmanager: string };
  stop(): Promise<void>;
}

function which(name: string): string | undefined {
  try {
    const p = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return p || undefined;
  } catch {
    return undefined;
  }
}

/** The installed binaries, or undefined for a missing one (Debian names first, then upstream names). */
export function findStackBinaries(): { prometheus: string | undefined; alertmanager: string | undefined } {
  return { prometheus: which('prometheus'), alertmanager: which('prometheus-alertmanager') ?? which('alertmanager') };
}

/** A free TCP port on 127.0.0.1 (bound and released; the OS does not hand it out again at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

interface Proc {
  readonly child: ChildProcess;
  readonly tail: () => string;
  readonly exited: Promise<number | null>;
}

function startProcess(bin: string, args: readonly string[]): Proc {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (buf: Buffer): void => {
    lines.push(...buf.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (err) => {
      lines.push(`spawn failed: ${err.message}`);
      resolve(-1);
    });
  });
  return { child, tail: () => lines.slice(-40).join('\n'), exited };
}

async function stopProcess(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 5000);
  await p.exited;
  clearTimeout(timer);
}

async function waitReady(url: string, proc: Proc, name: string, deadline: number): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`${name} exited during start-up:\n${proc.tail()}`);
    try {
      const res = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`${name} not ready at ${url} in time:\n${proc.tail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function prometheusConfig(o: {
  exporterUrl: string;
  metricsPath?: string;
  rulesFile: string;
  alertmanager: string;
  scrapeInterval: string;
  evaluationInterval: string;
  jobName: string;
}): string {
  const u = new URL(o.exporterUrl);
  const basePath = u.pathname.replace(/\/$/, '');
  return yamlText({
    global: { scrape_interval: o.scrapeInterval, scrape_timeout: o.scrapeInterval, evaluation_interval: o.evaluationInterval },
    rule_files: [o.rulesFile],
    alerting: { alertmanagers: [{ static_configs: [{ targets: [o.alertmanager] }] }] },
    scrape_configs: [
      {
        job_name: o.jobName,
        scheme: u.protocol.replace(':', ''),
        metrics_path: `${basePath}${o.metricsPath ?? '/metrics'}`,
        static_configs: [{ targets: [u.host] }],
      },
    ],
  });
}

export function alertmanagerConfig(o: { webhookUrl: string | undefined; groupWait: string; groupInterval: string }): string {
  return yamlText({
    route: {
      receiver: 'default',
      group_by: ['alertname', 'couchbase_cluster'],
      group_wait: o.groupWait,
      group_interval: o.groupInterval,
      repeat_interval: '1h',
    },
    receivers: [
      o.webhookUrl ? { name: 'default', webhook_configs: [{ url: o.webhookUrl, send_resolved: true }] } : { name: 'default' },
    ],
  });
}

export async function startPrometheusStack(opts: PrometheusStackOptions): Promise<PrometheusStack> {
  const found = findStackBinaries();
  const promBin = opts.prometheusBin ?? found.prometheus;
  const amBin = opts.alertmanagerBin ?? found.alertmanager;
  if (!promBin || !amBin) {
    throw new Error('prometheus and prometheus-alertmanager must be installed (Debian: apt-get install prometheus prometheus-alertmanager)');
  }
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'cbwatch-prometheus-'));
  const rulesFile = opts.rulesFile ?? join(PACKAGE_ROOT, 'alerts', 'cbwatch.rules.yml');
  mkdirSync(join(dataDir, 'prometheus'), { recursive: true });
  mkdirSync(join(dataDir, 'alertmanager'), { recursive: true });
  const promPort = opts.prometheusPort ? opts.prometheusPort : await freePort();
  const amPort = opts.alertmanagerPort ? opts.alertmanagerPort : await freePort();
  const amAddr = `127.0.0.1:${amPort}`;
  const promAddr = `127.0.0.1:${promPort}`;

  const amConfig = join(dataDir, 'alertmanager.yml');
  writeFileSync(
    amConfig,
    alertmanagerConfig({ webhookUrl: opts.webhookUrl, groupWait: opts.groupWait ?? '10s', groupInterval: opts.groupInterval ?? '10s' }),
  );
  const promConfig = join(dataDir, 'prometheus.yml');
  writeFileSync(
    promConfig,
    opts.prometheusConfig?.(amAddr) ??
      prometheusConfig({
        exporterUrl: opts.exporterUrl,
        ...(opts.metricsPath === undefined ? {} : { metricsPath: opts.metricsPath }),
        rulesFile,
        alertmanager: amAddr,
        scrapeInterval: opts.scrapeInterval ?? '15s',
        evaluationInterval: opts.evaluationInterval ?? opts.scrapeInterval ?? '15s',
        jobName: opts.jobName ?? 'cbwatch',
      }),
  );

  const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
  const am = startProcess(amBin, [
    `--config.file=${amConfig}`,
    `--storage.path=${join(dataDir, 'alertmanager')}`,
    `--web.listen-address=${amAddr}`,
    // Empty: no gossip listener, so parallel runs cannot collide on port 9094.
    '--cluster.listen-address=',
    '--log.level=warn',
  ]);
  const prom = startProcess(promBin, [
    `--config.file=${promConfig}`,
    `--storage.tsdb.path=${join(dataDir, 'prometheus')}`,
    `--web.listen-address=${promAddr}`,
    '--log.level=warn',
  ]);
  const stop = async (): Promise<void> => {
    await Promise.all([stopProcess(prom), stopProcess(am)]);
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitReady(`http://${amAddr}`, am, 'alertmanager', deadline);
    await waitReady(`http://${promAddr}`, prom, 'prometheus', deadline);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    prometheusUrl: `http://${promAddr}`,
    alertmanagerUrl: `http://${amAddr}`,
    logs: () => ({ prometheus: prom.tail(), alertmanager: am.tail() }),
    stop,
  };
}

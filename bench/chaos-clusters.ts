/**
 * `CHAOS_PARTS=clusters npm run chaos` (issue 39, item 5): what one cluster costs a process. One exporter
 * (through the launcher) watches one simulated cluster; its resident memory is sampled; then its file is rewritten
 * to 1,000 clusters (all on the same simulator, every collector at its default interval) and a SIGHUP applies it;
 * its memory is sampled for CHAOS_CLUSTERS_SECONDS (default 150: five 30-second rounds of polls). The cost per
 * cluster is (median RSS at 1,000 − median RSS at 1) / 999. Also a case of issue 39: a reload into the same file
 * with one cluster name 1 MB long (refused now: names are at most 255 characters).
 *
 * On main (issue 39): 1,000 clusters in one process reached 1.0–1.6 GB and a core, with no warning; a SIGHUP from
 * 1 cluster to 1,000 passed 1.46 GB in 20 s; a 1 MB cluster name, reloaded, passed 1.46 GB.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuSeconds, freePort, rssMB } from './common.js';
import { fmt, percentile } from './chaos-lib.js';
import type { Rows } from './chaos-lib.js';
import { log, sleep, start, stopProc, tempDir, timedGet, waitUntil } from './chaos-harness.js';

const SECONDS = Number(process.env.CHAOS_CLUSTERS_SECONDS ?? 150);
const COUNT = Number(process.env.CHAOS_CLUSTERS_COUNT ?? 1000);

function file(simUrl: string, names: readonly string[]): string {
  return ['clusters:', ...names.flatMap((n) => [`  - name: ${n}`, `    url: ${simUrl}`, '    username: Administrator', '    password_env: CHAOS_CB_PASSWORD']), ''].join('\n');
}

/** RSS (MB) of `pid` every second for `seconds`. */
async function sample(pid: number, seconds: number): Promise<number[]> {
  const out: number[] = [];
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    out.push(rssMB(pid));
    await sleep(1000);
  }
  return out;
}

const count = (text: string, prefix: string): number => text.split('\n').filter((l) => l.startsWith(prefix)).length;

export async function caseClusters(): Promise<Rows> {
  const dir = tempDir();
  const simPort = await freePort();
  const sim = start(['simulate', '--port', String(simPort), '--buckets', '1']);
  const simUrl = `http://127.0.0.1:${simPort}`;
  await waitUntil('simulator', async () => ((await fetch(`${simUrl}/_sim/state`)).ok ? true : undefined), 60_000);
  const cfg = join(dir, 'cbwatch.yml');
  writeFileSync(cfg, file(simUrl, ['c0000']));
  const port = await freePort();
  const exp = start(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`], { CHAOS_CB_PASSWORD: 'password' });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntil('exporter ready', async () => ((await timedGet(`${url}/-/ready`)).status === 200 ? true : undefined), 120_000, 250);
    const warnedAtOne = /more clusters than one process should carry/.test(exp.output());
    log('clusters: one cluster, 40 s');
    await sleep(10_000);
    const one = await sample(exp.pid, 30);

    // A reload into a file whose one cluster has a 1 MB name (issue 39): refused before anything is built.
    writeFileSync(cfg, file(simUrl, ['c0000' + 'x'.repeat(1024 * 1024)]));
    log('clusters: SIGHUP into a file with a 1 MB name');
    const beforeLong = rssMB(exp.pid);
    exp.child.kill('SIGHUP');
    const afterLong = await sample(exp.pid, 20);
    const tail = exp.output().slice(-50_000);
    const refusedLong = /configuration reload failed/.test(tail) && /may be at most 255 characters long/.test(tail);
    const aliveLong = (await timedGet(`${url}/-/healthy`)).status === 200;
    await sleep(2_000);
    const names = Array.from({ length: COUNT }, (_, i) => `c${String(i).padStart(4, '0')}`);
    writeFileSync(cfg, file(simUrl, names));
    log(`clusters: SIGHUP to ${COUNT} clusters, ${SECONDS} s`);
    const cpu0 = cpuSeconds(exp.pid);
    exp.child.kill('SIGHUP');
    // The warning comes with the reload, before the new clusters' logs could push it out of the kept output.
    const warnedP = waitUntil('the warning', async () => (/more clusters than one process should carry/.test(exp.output()) ? true : undefined), 60_000, 200).then(
      () => true,
      () => false,
    );
    const many = await sample(exp.pid, SECONDS);
    const cpu = (cpuSeconds(exp.pid) - cpu0) / SECONDS;
    const body = (await timedGet(`${url}/metrics`, 30_000)).body;
    const up = count(body, 'couchbase_up{');
    const warned = await warnedP;
    const first20 = many.slice(0, 20);
    const settled = many.slice(-60);
    const oneMed = percentile(one, 50);
    const manyMed = percentile(settled, 50);
    const rows: Rows = [
      ['setup', `one exporter (launcher flags), one simulator (1 bucket); clusters all on it, every collector at its default interval; ${COUNT} clusters applied by SIGHUP`],
      ['1 cluster', `median RSS ${fmt(oneMed, 1)} MB`],
      ['reload into a file whose cluster name is 1 MB long', `${refusedLong ? 'refused (name at most 255 characters)' : 'NOT refused'}; RSS ${fmt(beforeLong, 1)} MB before, peak ${fmt(Math.max(...afterLong), 1)} MB in the 20 s after; ${aliveLong ? 'alive' : 'NOT alive'}`],
      ['– on main (issue 39)', 'a 1 MB cluster name, reloaded: past 1.46 GB'],
      [`${COUNT} clusters, first 20 s after the SIGHUP`, `peak RSS ${fmt(Math.max(...first20), 1)} MB`],
      [`${COUNT} clusters, ${SECONDS} s`, `peak RSS ${fmt(Math.max(...many), 1)} MB; median of the last 60 s ${fmt(manyMed, 1)} MB; CPU ${fmt(cpu, 2)} s/s; couchbase_up series ${up}`],
      ['per cluster', `${fmt(((manyMed - oneMed) / (COUNT - 1)) * 1024, 0)} KiB ((median at ${COUNT} − median at 1) / ${COUNT - 1})`],
      ['warning logged', `${warned ? 'yes' : 'no'} (at 1 cluster: ${warnedAtOne ? 'yes' : 'no'})`],
      ['on main (issue 39)', '1,000 clusters: 1.0–1.6 GB and a core, no warning; SIGHUP from 1 to 1,000 passed 1.46 GB in 20 s'],
    ];

    return rows;
  } finally {
    await stopProc(exp);
    await stopProc(sim);
  }
}

/**
 * `CHAOS_PARTS=webhook-bodies npm run chaos`: hostile Sync Gateway webhook bodies against the real launcher, and
 * what the HTTP thread's own routes answer meanwhile. Eight senders post 1 MiB bodies back to back (the default
 * `max_body_bytes`, with the right token) while a prober asks `/-/healthy` and `/metrics` in turn every 100 ms:
 *
 *  - quiet: no posts (the baseline);
 *  - deep: `[` × 512 Ki then `]` × 512 Ki (half a million levels of nested arrays);
 *  - wide: one object holding an array of ~200,000 small numbers (valid, shallow: the whole body must be parsed).
 *
 * Per phase: the probes' p50, p99 and max per route, probes that failed, posts answered per status, and the
 * exporter's own count of refused bodies. CHAOS_WEBHOOK_BODIES_SECONDS sets each phase's length (20);
 * CHAOS_WEBHOOK_BODIES_CLI runs another build's launcher (another checkout's bin/cbwatch.js) for a before figure.
 */
import { join } from 'node:path';
import { request } from 'node:http';
import { fmt, percentile, sumSeries } from './chaos-lib.js';
import type { Rows } from './chaos-lib.js';
import { CLI, freePort } from './common.js';
import { allGreen, log, probeRoutes, start, startSim, stopProc, tempDir, timedGet, waitUntil, writeChaosConfig } from './chaos-harness.js';

const TOKEN = 'chaos-webhook-bodies-token';
const SENDERS = 8;
const BODY_BYTES = 1024 * 1024;

function deepBody(): Buffer {
  return Buffer.from('['.repeat(BODY_BYTES / 2) + ']'.repeat(BODY_BYTES / 2));
}

function wideBody(): Buffer {
  const head = '{"_id":"wide","type":"wide","a":[';
  const n = Math.floor((BODY_BYTES - head.length - 2) / 5);
  return Buffer.from(`${head}${Array.from({ length: n }, (_, i) => String(1000 + (i % 9000))).join(',')}]}`);
}

/** One POST over a fresh connection; the status, or 0 when it failed. */
function post(port: number, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: `/webhooks/sync-gateway/db1?token=${TOKEN}`, headers: { 'content-type': 'application/json', 'content-length': body.length }, timeout: 60_000 },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end(body);
  });
}

interface Phase {
  healthy: number[];
  metrics: number[];
  failed: number;
  statuses: Map<number, number>;
}

async function phase(url: string, port: number, body: Buffer | undefined, seconds: number): Promise<Phase> {
  const end = Date.now() + seconds * 1000;
  const statuses = new Map<number, number>();
  const sender = async (): Promise<void> => {
    if (!body) return;
    while (Date.now() < end) {
      const s = await post(port, body);
      statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
  };
  const [probes] = await Promise.all([probeRoutes(url, end), ...Array.from({ length: SENDERS }, sender)]);
  return { ...probes, statuses };
}

function describe(values: readonly number[]): string {
  if (values.length === 0) return 'no answer';
  return `p50 ${fmt(percentile(values, 50), 1)} ms, p99 ${fmt(percentile(values, 99), 1)} ms, max ${fmt(Math.max(...values), 1)} ms (${values.length} probes)`;
}

export async function caseWebhookBodies(): Promise<Rows> {
  const seconds = Number(process.env.CHAOS_WEBHOOK_BODIES_SECONDS ?? 20);
  const cli = process.env.CHAOS_WEBHOOK_BODIES_CLI ?? CLI;
  log(`case: ${SENDERS} senders of hostile 1 MiB webhook bodies, ${seconds} s a phase (${cli})`);
  const dir = tempDir();
  const { sim, simUrl } = await startSim(3);
  const cfg = join(dir, 'cbwatch.yml');
  writeChaosConfig(cfg, simUrl, {
    intervalS: 5,
    extraFile: ['webhooks:', '  sync_gateway:', '    enabled: true', '    token_env: CHAOS_WEBHOOK_TOKEN', '    databases: [db1]', '    type_field: type'],
  });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const exp = start(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'info'], { CHAOS_CB_PASSWORD: 'password', CHAOS_WEBHOOK_TOKEN: TOKEN }, cli);
  try {
    await waitUntil('exporter healthy', async () => ((await fetch(`${url}/-/healthy`)).ok ? true : undefined), 60_000);
    await allGreen(url, ['buckets', 'nodes'], 120_000);
    const rows: Rows = [
      ['load', `${SENDERS} senders posting 1 MiB bodies back to back (max_body_bytes default 1 MiB, right token); a prober asks /-/healthy and /metrics in turn every 100 ms; ${seconds} s a phase; every collector polling every 5 s against a 3-bucket simulator`],
      ['launcher', cli === CLI ? 'this checkout' : cli],
    ];
    const phases: Array<[string, Buffer | undefined]> = [
      ['quiet (no posts)', undefined],
      ['deep: 512 Ki nested arrays', deepBody()],
      ['wide: an array of ~200,000 numbers', wideBody()],
    ];
    for (const [name, body] of phases) {
      log(`  phase ${name}`);
      const p = await phase(url, port, body, seconds);
      rows.push([`${name}: /-/healthy`, describe(p.healthy)]);
      rows.push([`${name}: /metrics`, describe(p.metrics)]);
      if (p.failed) rows.push([`${name}: probes without a 200`, String(p.failed)]);
      if (body) rows.push([`${name}: posts answered`, [...p.statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${n} × ${s === 0 ? 'no answer' : s}`).join(', ')]);
    }
    const m = await timedGet(`${url}/metrics`, 30_000);
    const counted = ['too_deep', 'bad_json', 'not_object', 'accepted', 'error']
      .map((r) => [r, sumSeries(m.body, 'cbwatch_webhook_documents_total', `result="${r}"`)] as const)
      .filter(([, n]) => n > 0)
      .map(([r, n]) => `${r} ${n}`);
    rows.push(['cbwatch_webhook_documents_total by result afterwards', counted.join(', ') || 'none']);
    rows.push(['exporter alive afterwards', (await timedGet(`${url}/-/healthy`)).status === 200 ? 'yes' : 'no']);
    return rows;
  } finally {
    await stopProc(exp);
    await stopProc(sim);
  }
}

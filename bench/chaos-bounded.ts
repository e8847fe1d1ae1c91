/**
 * Chaos part `bounded` (issue 25, item 1): small answers that fail their whole schema, served on several routes
 * at once by a rewriting proxy between the exporter and the simulator. The attack run against main: a 500 KB
 * `{"nodesExt":[1,1,…]}` took the exporter from 123 MB to 1,070 MB of RSS with a 102 MB log line; 2 MB took it
 * to 3 GB, failed 9 of 11 collectors and pushed /metrics p99 to 1.4 s.
 *
 * Phases: normal answers (baseline), then every listed route answers a 500 KB body of `1,` entries, then
 * 2 MB. Per phase: peak RSS of the exporter (/proc, every 250 ms), the longest line it wrote (stdout and stderr,
 * whole lines counted across chunks), the collectors seen failing in scrapes, /metrics p99 (scraped every
 * 250 ms). Everything black-box: real processes through the launcher, HTTP and /proc.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COLLECTORS, writeChaosConfig } from './chaos-harness.js';
import { fmt, percentile, readCollectors } from './chaos-lib.js';
import { CLI, freePort, rssMB } from './common.js';

const PHASE_SECONDS = Number(process.env.CHAOS_BOUNDED_SECONDS ?? 40);

/** Routes answered with a bad body, and the body's shape around the `1,1,…` run. */
export const BAD_ROUTES: ReadonlyArray<{ readonly match: RegExp; readonly wrap: (ones: string) => string; readonly route: string }> = [
  { route: '/pools/default/nodeServices', match: /^\/pools\/default\/nodeServices$/, wrap: (o) => `{"nodesExt":[${o}]}` },
  { route: '/pools/default/serverGroups', match: /^\/pools\/default\/serverGroups$/, wrap: (o) => `{"groups":[${o}]}` },
  { route: '/settings/security', match: /^\/settings\/security$/, wrap: (o) => `{"cipherSuites":[${o}]}` },
  { route: '/pools/default/buckets/{bucket}/scopes', match: /^\/pools\/default\/buckets\/[^/]+\/scopes$/, wrap: (o) => `{"scopes":[${o}]}` },
  { route: '/pools/default/tasks', match: /^\/pools\/default\/tasks$/, wrap: (o) => `[${o}]` },
  { route: '/pools/default/trustedCAs', match: /^\/pools\/default\/trustedCAs$/, wrap: (o) => `[${o}]` },
  { route: '/pools/default/remoteClusters', match: /^\/pools\/default\/remoteClusters$/, wrap: (o) => `[${o}]` },
];

/** `1,1,…,1`: `bytes` long (give or take one). */
export function ones(bytes: number): string {
  return `${'1,'.repeat(Math.max(0, Math.floor(bytes / 2) - 1))}1`;
}

interface Child {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  /** The longest line written so far (stdout and stderr), and a prefix of it. */
  longest(): { length: number; head: string };
  resetLongest(): void;
}

function start(args: string[], env: Record<string, string> = {}): Child {
  const child = spawn(CLI, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let longest = 0;
  let head = '';
  const track = (): ((d: Buffer) => void) => {
    let current = 0;
    let currentHead = '';
    return (d: Buffer) => {
      const s = d.toString('utf8');
      let from = 0;
      for (let nl = s.indexOf('\n'); nl >= 0; nl = s.indexOf('\n', from)) {
        current += nl - from;
        if (currentHead.length < 200) currentHead += s.slice(from, Math.min(nl, from + 200 - currentHead.length));
        if (current > longest) [longest, head] = [current, currentHead];
        current = 0;
        currentHead = '';
        from = nl + 1;
      }
      current += s.length - from;
      if (currentHead.length < 200) currentHead += s.slice(from, from + 200 - currentHead.length);
      if (current > longest) [longest, head] = [current, currentHead];
    };
  };
  child.stdout?.on('data', track());
  child.stderr?.on('data', track());
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    child,
    exited,
    longest: () => ({ length: longest, head }),
    resetLongest: () => {
      longest = 0;
      head = '';
    },
  };
}

async function stop(c: Child): Promise<void> {
  if (c.child.exitCode !== null || c.child.signalCode !== null) return;
  c.child.kill('SIGTERM');
  const t = setTimeout(() => c.child.kill('SIGKILL'), 60_000);
  await c.exited;
  clearTimeout(t);
}


async function waitUntil(what: string, fn: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The proxy: forwards to the simulator, except that listed routes answer `bad` when one is set. */
function proxy(target: URL, state: { body: ((path: string) => string | undefined) | undefined }): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const bad = state.body?.(path);
    if (bad !== undefined) {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(bad) }).end(bad);
      return;
    }
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
}

export type Rows = Array<[string, string]>;

interface PhaseResult {
  readonly name: string;
  readonly rssMax: number;
  readonly longest: { length: number; head: string };
  readonly failed: string[];
  readonly reasons: ReadonlyMap<string, string>;
  readonly p99: number;
  readonly max: number;
  readonly scrapes: number;
  readonly scrapeFailures: number;
  readonly alive: boolean;
}

export async function caseBoundedSchemaFailures(): Promise<Rows> {
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-chaos-bounded-'));
  const simPort = await freePort();
  const sim = start(['simulate', '--port', String(simPort), '--buckets', '3']);
  const simUrl = new URL(`http://127.0.0.1:${simPort}`);
  const state: { body: ((path: string) => string | undefined) | undefined } = { body: undefined };
  const front = proxy(simUrl, state);
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  const frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  let exp: Child | undefined;
  try {
    await waitUntil('simulator', async () => (await fetch(`${simUrl.origin}/_sim/state`)).ok, 60_000);
    const cfg = join(dir, 'cbwatch.yml');
    writeChaosConfig(cfg, frontUrl, { intervalS: 5 });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // The shipped log level (info): a failed poll is logged at warn with its error.
    exp = start(['run', '--config', cfg, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'info'], { CHAOS_CB_PASSWORD: 'password' });
    const e = exp;
    await waitUntil('exporter healthy', async () => (await fetch(`${url}/-/healthy`)).ok, 60_000);
    await waitUntil(
      'every collector green',
      async () => {
        const v = readCollectors(await (await fetch(`${url}/metrics`)).text());
        return COLLECTORS.every((c) => v.success.get(c) === 1);
      },
      120_000,
    );

    const phase = async (name: string, body: ((path: string) => string | undefined) | undefined): Promise<PhaseResult> => {
      state.body = body;
      e.resetLongest();
      const end = Date.now() + PHASE_SECONDS * 1000;
      let rssMax = rssMB(e.child.pid);
      const failed = new Set<string>();
      const reasons = new Map<string, string>();
      const lat: number[] = [];
      let scrapeFailures = 0;
      while (Date.now() < end && e.child.exitCode === null) {
        rssMax = Math.max(rssMax, rssMB(e.child.pid) || 0);
        const t0 = performance.now();
        try {
          const r = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(15_000) });
          const text = await r.text();
          if (!r.ok) scrapeFailures++;
          const v = readCollectors(text);
          for (const c of COLLECTORS) {
            if (v.success.get(c) !== 0) continue;
            failed.add(c);
            // Why, as the landing page says it (the first reason seen per collector in this phase).
            if (!reasons.has(c)) reasons.set(c, '');
          }
          if ([...reasons.values()].includes('')) {
            const landing = await (await fetch(`${url}/`, { signal: AbortSignal.timeout(15_000) })).text();
            for (const m of landing.matchAll(/<tr class="failed"><td>[^<]*<\/td><td>([^<]*)<\/td>(?:<td>[^<]*<\/td>){5}<td>([^<]*)<\/td>/g)) {
              if (reasons.get(m[1] as string) === '') reasons.set(m[1] as string, (m[2] as string).replace(/&quot;/g, '"').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>'));
            }
          }
        } catch {
          scrapeFailures++;
        }
        const ms = performance.now() - t0;
        lat.push(ms);
        rssMax = Math.max(rssMax, rssMB(e.child.pid) || 0);
        await new Promise((r) => setTimeout(r, Math.max(0, 250 - ms)));
      }
      return {
        name,
        rssMax,
        longest: e.longest(),
        failed: [...failed].sort(),
        reasons,
        p99: percentile(lat, 99),
        max: Math.max(...lat),
        scrapes: lat.length,
        scrapeFailures,
        alive: e.child.exitCode === null && e.child.signalCode === null,
      };
    };

    const rss0 = rssMB(e.child.pid);
    const badBody = (bytes: number): ((path: string) => string | undefined) => {
      const run = ones(bytes);
      const bodies = BAD_ROUTES.map((r) => [r.match, r.wrap(run)] as const);
      return (path) => bodies.find(([m]) => m.test(path))?.[1];
    };
    const results = [await phase('normal answers', undefined), await phase('500 KB bad answers', badBody(500 * 1024)), await phase('2 MB bad answers', badBody(2 * 1024 * 1024))];
    // Recovery: normal answers again; every collector back within two intervals and a little.
    state.body = undefined;
    const t0 = Date.now();
    let recovered = 'not within 60 s';
    try {
      await waitUntil(
        'recovery',
        async () => {
          const v = readCollectors(await (await fetch(`${url}/metrics`)).text());
          return COLLECTORS.every((c) => v.success.get(c) === 1);
        },
        60_000,
      );
      recovered = `${fmt((Date.now() - t0) / 1000, 1)} s`;
    } catch {
      /* reported as not recovered */
    }
    const rows: Rows = [
      ['bad answers', `every ${PHASE_SECONDS} s phase: ${BAD_ROUTES.map((r) => `\`${r.route}\``).join(', ')} answer 200 with a body of \`1,\` entries in the shape each expects (e.g. \`{"nodesExt":[1,1,…]}\`); 11 collectors every 5 s, 3 buckets, log level info`],
      ['RSS at start', `${fmt(rss0)} MB`],
    ];
    for (const r of results) {
      rows.push([
        r.name,
        `peak RSS ${fmt(r.rssMax)} MB; longest log line ${r.longest.length.toLocaleString('en')} bytes; collectors failed: ${r.failed.length === 0 ? 'none' : r.failed.join(', ')} (${r.failed.length} of ${COLLECTORS.length}); /metrics p99 ${fmt(r.p99, 1)} ms, max ${fmt(r.max, 1)} ms over ${r.scrapes} scrapes, ${r.scrapeFailures} failed; exporter ${r.alive ? 'alive' : 'EXITED'}`,
      ]);
    }
    for (const r of results) {
      for (const [c, why] of [...r.reasons].sort()) rows.push([`${r.name}: why ${c} failed (first reason seen)`, `\`${why.slice(0, 200).replace(/`/g, "'")}\``]);
    }
    rows.push(['recovery after normal answers return (every collector green)', recovered]);
    const worst = results.reduce((a, r) => (r.longest.length > a.longest.length ? r : a));
    rows.push(['head of the longest log line', `\`${worst.longest.head.slice(0, 160).replace(/`/g, "'")}\``]);
    return rows;
  } finally {
    if (exp) await stop(exp);
    await stop(sim);
    front.closeAllConnections();
    await new Promise<void>((r) => front.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  }
}

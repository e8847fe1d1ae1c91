/**
 * Every secret the configuration can hold, driven through every error path an upstream can take, must not
 * reach the log, /metrics, the landing page or `cbwatch check`. The upstream here is hostile on purpose: its
 * error bodies echo the request's headers and quote the secrets in every form it can.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheck } from '../../src/check.js';
import { loadConfig } from '../../src/config/load.js';
import { webConfigToServerOptions } from '../../src/config/webconfig.js';
import { startDaemon } from '../../src/daemon.js';
import type { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log.js';

const ENV_PASSWORD = 'env-Pa55word-9f3k2j';
const FILE_PASSWORD = 'file-Pa55word-x81mzq';
const WEB_PASSWORD = 'web-Pa55word-q7w8e9';
const WEBHOOK_TOKEN = 'webhook-token-Zk3mQ9xP2wL7vB4n';
const LDAP_BIND_PASS = 'ldap-bind-Pa55-77aa';
const WEB_HASH = bcrypt.hashSync(WEB_PASSWORD, 4);

type Mode = 'echo500' | 'echo400' | 'ldap500' | 'badjson' | 'hang' | 'echo404' | 'keyecho';
let mode: Mode = 'echo500';

/** Every form a secret may take in an answer: plain, base64, inside the Basic header, URL-encoded. */
function forms(secret: string): string[] {
  return [secret, Buffer.from(secret).toString('base64').replace(/=+$/, ''), encodeURIComponent(secret)];
}
const SECRETS: Record<string, string[]> = {
  'cluster password (env)': [...forms(ENV_PASSWORD), Buffer.from(`cbw-env:${ENV_PASSWORD}`).toString('base64').replace(/=+$/, '')],
  'cluster password (file)': [...forms(FILE_PASSWORD), Buffer.from(`cbw-file:${FILE_PASSWORD}`).toString('base64').replace(/=+$/, '')],
  'web basic-auth password': [...forms(WEB_PASSWORD), Buffer.from(`prom:${WEB_PASSWORD}`).toString('base64').replace(/=+$/, ''), WEB_HASH],
  'webhook token': forms(WEBHOOK_TOKEN),
  'LDAP bindPass': [LDAP_BIND_PASS],
};

function hostile(req: IncomingMessage, res: ServerResponse): void {
  const everything = Object.values(SECRETS).flat().join(' ');
  const echo = { error: 'proxy echo', method: req.method, url: req.url, headers: req.headers, note: `secrets: ${everything}` };
  switch (mode) {
    case 'echo500':
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(echo));
      return;
    case 'echo404':
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(echo));
      return;
    case 'echo400': {
      const lines = Object.entries(req.headers).map(([k, v]) => `${k}: ${String(v)}`);
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`Bad Request\n${lines.join('\n')}\n${everything}\n`);
      return;
    }
    case 'ldap500':
      res
        .writeHead(500, { 'content-type': 'text/plain' })
        .end(`{error,{badmatch,[{hosts,["ldap1"]},{bindDN,<<"cn=admin">>},{bindPass,<<"${LDAP_BIND_PASS}">>}]}} {"bindPass":"${LDAP_BIND_PASS}","password":"${ENV_PASSWORD}"} ${req.headers.authorization ?? ''}`);
      return;
    case 'badjson':
      res.writeHead(200, { 'content-type': 'application/json' }).end(`password=${FILE_PASSWORD} ${everything} {not json`);
      return;
    case 'hang':
      return; // never answers; the poll's deadline ends it
    case 'keyecho': {
      // An upstream that echoes request data into JSON keys (issue 25, item 4): the keys land in a schema
      // failure's path. One key has 16 KB of whitespace in front of the secrets.
      const keyed = Object.fromEntries([...Object.values(SECRETS).flat(), `${' '.repeat(16 * 1024)}${everything}`, req.headers.authorization ?? ''].map((k) => [k, 'x']));
      const path = (req.url ?? '').split('?')[0];
      if (path === '/pools/default/trustedCAs') res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
      else if (path === '/pools/default/nodeServices') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ nodesExt: [], clusterCapabilities: keyed }));
      else if (path === '/pools/default/tasks') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ type: 'rebalance', perNode: keyed }]));
      else res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(echo));
      return;
    }
  }
}

let upstream: ReturnType<typeof createServer>;
let base: string;
let dir: string;
const logs: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _e, cb) {
    logs.push(chunk.toString('utf8'));
    cb();
  },
});
let daemon: Daemon;
let config: ReturnType<typeof loadConfig>;

beforeAll(async () => {
  upstream = createServer(hostile);
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'cbw-secrets-'));
  writeFileSync(join(dir, 'pw'), `${FILE_PASSWORD}\n`);
  writeFileSync(join(dir, 'token'), `${WEBHOOK_TOKEN}\n`);
  writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n  prom: ${WEB_HASH}\n`);
  const collectors = ['buckets', 'bucket_stats', 'xdcr', 'nodes', 'tasks', 'autofailover', 'certificates', 'security', 'collections', 'search', 'backup']
    // A deadline that bounds the hanging upstream, and that a poll of a prompt answer meets on a loaded machine too
    // (with 1s, a slow poll showed its deadline instead of the error under test).
    .map((n) => `      ${n}: { interval: 60s, timeout: 10s }`)
    .join('\n');
  writeFileSync(
    join(dir, 'cbwatch.yml'),
    `clusters:
  - name: from-env
    url: ${base}
    username: cbw-env
    password_env: CBW_TEST_PW
    search_url: ${base}
    backup_url: ${base}
    collectors:
${collectors}
  - name: from-file
    url: ${base}
    username: cbw-file
    password_file: ${join(dir, 'pw')}
    search_url: ${base}
    backup_url: ${base}
    collectors:
${collectors}
webhooks:
  sync_gateway: { enabled: true, token_file: ${join(dir, 'token')}, databases: [db1] }
`,
  );
  config = loadConfig({ config: join(dir, 'cbwatch.yml'), 'web.config.file': join(dir, 'web.yml'), 'web.listen-address': '127.0.0.1:0' }, { CBW_TEST_PW: ENV_PASSWORD });
  const server = webConfigToServerOptions(config.web.settings);
  daemon = await startDaemon({
    config,
    logger: createLogger({ level: 'trace', destination: sink }),
    processMetrics: false,
    ...(server.authorize ? { authorize: server.authorize } : {}),
  });
});

afterAll(async () => {
  await daemon?.close();
  upstream.closeAllConnections();
  await new Promise<void>((r) => upstream.close(() => r()));
});

const auth = { authorization: `Basic ${Buffer.from(`prom:${WEB_PASSWORD}`).toString('base64')}` };

function expectClean(where: string, text: string): void {
  for (const [name, values] of Object.entries(SECRETS)) {
    for (const v of values) expect(text.includes(v), `${name} (${v.slice(0, 6)}…) leaked into ${where}`).toBe(false);
  }
}

describe('no secret leaks through an upstream error', () => {
  it.each(['echo500', 'echo400', 'echo404', 'ldap500', 'badjson', 'hang', 'keyecho'] as const)('%s: log, /metrics, landing page and check stay clean', async (m) => {
    mode = m;
    logs.length = 0;
    await daemon.scheduler.pollAllOnce();
    const statuses = daemon.store.statusList();
    // The error paths were taken (a 404 is "not applicable" for a few optional endpoints).
    expect(statuses.filter((s) => s.ok === false).length).toBeGreaterThan(statuses.length / 2);
    const metrics = await (await fetch(`${daemon.url}/metrics`, { headers: auth })).text();
    const landing = await (await fetch(`${daemon.url}/`, { headers: auth })).text();
    expect(landing).toContain('CBW_ERR_');
    let checkOut = '';
    const checkLogs: string[] = [];
    const checkSink = new Writable({
      write(chunk: Buffer, _e, cb) {
        checkLogs.push(chunk.toString('utf8'));
        cb();
      },
    });
    const code = await runCheck(config, (s) => (checkOut += s), createLogger({ level: 'trace', destination: checkSink }));
    expect(code).toBe(1);
    expect(logs.join('').length).toBeGreaterThan(0);
    expectClean('the log', logs.join(''));
    expectClean('/metrics', metrics);
    expectClean('the landing page', landing);
    expectClean('cbwatch check', checkOut);
    expectClean('the check log', checkLogs.join(''));
    // The landing page shows codes and reasons, not bodies.
    expect(landing).not.toContain('proxy echo');
    expect(landing).not.toContain('badmatch');
    // A schema failure's path was shown, with the keys redacted.
    if (m === 'keyecho') expect(landing).toMatch(/clusterCapabilities/);
  }, 120_000);
});

/**
 * The bench's scrape client and its ceiling server, each in a process of its own (`node bench/out/bench/probe.js`).
 *
 *   probe.js loop URL SECONDS   one keep-alive connection scraping URL back to back for SECONDS; prints one JSON
 *                               array of [start ms since the epoch, end ms, duration ms] per scrape
 *   probe.js serve FILE PORT    a bare Node http server answering every request with FILE's bytes (the ceiling)
 *
 * In the bench's own process the same loop ran 2-3x slower on a 26 MB body (p50 22 ms against 7 ms for the same
 * server and bytes): that process holds the scenario's texts and timers, and a client and a ceiling server there
 * share one thread. A scrape's cost should be the exporter's and the machine's, not the measuring process's.
 */
import { readFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';

function get(agent: Agent, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => resolve(n));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function loop(url: string, seconds: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const out: Array<[number, number, number]> = [];
  const start = Date.now();
  while (Date.now() - start < seconds * 1000) {
    const s = Date.now();
    const h0 = performance.now();
    await get(agent, url);
    out.push([s, Date.now(), performance.now() - h0]);
  }
  agent.destroy();
  process.stdout.write(JSON.stringify(out));
}

function serve(file: string, port: number): void {
  const body = readFileSync(file);
  createServer((_req, res) => {
    res.setHeader('content-type', 'text/plain; version=0.0.4; charset=utf-8');
    res.end(body);
  }).listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
}

const [mode, a, b] = process.argv.slice(2);
if (mode === 'loop' && a && b) await loop(a, Number(b));
else if (mode === 'serve' && a && b) serve(a, Number(b));
else {
  process.stderr.write('usage: probe.js loop URL SECONDS | probe.js serve FILE PORT\n');
  process.exit(2);
}

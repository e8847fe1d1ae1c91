/**
 * `npm run chaos`: request floods shared by the slots and readers parts — `c` keep-alive connections on loopback
 * asking back to back until `done()`, each answer's status counted ('error' for a connection that failed).
 */
import { Agent, request } from 'node:http';
import type { RequestOptions } from 'node:http';

/** The flood's statuses, and the body bytes it read. */
export interface FloodResult {
  readonly statuses: Map<string, number>;
  readonly bytes: number;
}

/**
 * `c` connections to 127.0.0.1:`port`, each sending `options()` (a fresh request's path, method and headers) as
 * soon as its previous answer ended. `pauseOnErrorMs`: how long a connection waits after a failed request.
 */
export async function flood(port: number, c: number, done: () => boolean, options: () => RequestOptions, pauseOnErrorMs = 0): Promise<FloodResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: c });
  const statuses = new Map<string, number>();
  let bytes = 0;
  const loop = async (): Promise<void> => {
    while (!done()) {
      const status = await new Promise<string>((resolve) => {
        const req = request({ timeout: 30_000, ...options(), host: '127.0.0.1', port, agent }, (res) => {
          res.on('data', (d: Buffer) => (bytes += d.length));
          res.once('end', () => resolve(String(res.statusCode)));
          res.once('error', () => resolve('error'));
        });
        req.on('timeout', () => req.destroy());
        req.on('error', () => resolve('error'));
        req.end();
      });
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status === 'error' && pauseOnErrorMs > 0) await new Promise((r) => setTimeout(r, pauseOnErrorMs));
    }
  };
  await Promise.all(Array.from({ length: c }, loop));
  agent.destroy();
  return { statuses, bytes };
}

/** Statuses as `n × status`, in status order. */
export const counts = (m: Map<string, number>): string =>
  [...m]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, n]) => `${n} × ${s}`)
    .join(', ');

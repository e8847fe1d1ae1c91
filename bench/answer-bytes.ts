/**
 * A TCP relay in front of the simulator that counts the bytes of its answers (simulator → exporter, headers and
 * bodies as sent on the wire): the "answer bytes" of the statistics-source comparison. Plain TCP, so keep-alive
 * and pipelining pass through untouched; the relay adds no HTTP parsing of its own.
 */
import { createConnection, createServer } from 'node:net';
import type { Server } from 'node:net';

export interface ByteRelay {
  readonly port: number;
  /** Bytes the simulator sent back so far. */
  bytes(): number;
  close(): Promise<void>;
}

export async function byteRelay(targetPort: number): Promise<ByteRelay> {
  let answered = 0;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    upstream.on('data', (chunk: Buffer) => {
      answered += chunk.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  return {
    port,
    bytes: () => answered,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

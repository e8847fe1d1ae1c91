/** A rotated webhook token_file is accepted without a restart: read again on a wrong token, or handed over by a reload. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { redact } from '../../src/redact.js';
import { registerSyncGatewayWebhooks } from '../../src/webhooks/sync-gateway.js';

const OLD = 'old-token-0123456789abcdef';
const NEW = 'new-token-fedcba9876543210';
const post = (app: ReturnType<typeof Fastify>, token: string) =>
  app.inject({ method: 'POST', url: `/webhooks/sync-gateway/db1?token=${token}`, headers: { 'content-type': 'application/json' }, payload: '{"_id":"d1"}' });

describe('webhook token rotation', () => {
  it('reads token_file again on a wrong token: the new token is accepted, the old one refused', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cbwatch-tok-')), 'token');
    writeFileSync(file, `${OLD}\n`);
    const app = Fastify({ logger: false });
    registerSyncGatewayWebhooks(app, { enabled: true, token: OLD, tokenFile: file, databases: ['db1'], max_body_bytes: 4096, max_types: 3, max_concurrency: 4 }, pino({ level: 'silent' }));
    await app.ready();
    try {
      expect((await post(app, OLD)).statusCode).toBe(200);
      writeFileSync(file, `${NEW}\n`);
      expect((await post(app, NEW)).statusCode).toBe(200);
      expect((await post(app, OLD)).statusCode).toBe(401);
      expect(redact(`t=${NEW}`)).not.toContain(NEW);
    } finally {
      await app.close();
    }
  });

  it('a token from the environment is handed over by a reload (setToken)', async () => {
    const app = Fastify({ logger: false });
    const receiver = registerSyncGatewayWebhooks(app, { enabled: true, token: OLD, databases: ['db1'], max_body_bytes: 4096, max_types: 3, max_concurrency: 4 }, pino({ level: 'silent' }));
    await app.ready();
    try {
      expect((await post(app, NEW)).statusCode).toBe(401);
      receiver.setToken(NEW);
      expect((await post(app, NEW)).statusCode).toBe(200);
      expect((await post(app, OLD)).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('a wall-clock step back does not hold the next read of token_file back for the size of the step', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cbwatch-tok-')), 'token');
    writeFileSync(file, `${OLD}\n`);
    const app = Fastify({ logger: false });
    registerSyncGatewayWebhooks(app, { enabled: true, token: OLD, tokenFile: file, databases: ['db1'], max_body_bytes: 4096, max_types: 3, max_concurrency: 4 }, pino({ level: 'silent' }));
    await app.ready();
    const realNow = Date.now;
    try {
      // The new token arrives before the file is rewritten: the file is read (no change), rereads pause 5 s.
      expect((await post(app, NEW)).statusCode).toBe(401);
      writeFileSync(file, `${NEW}\n`);
      // NTP steps the wall clock back an hour: the pause still ends 5 s after that read (before the fix, an hour).
      vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000);
      const end = performance.now() + 20_000;
      let status = 0;
      while (status !== 200 && performance.now() < end) {
        status = (await post(app, NEW)).statusCode;
        if (status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      expect(status).toBe(200);
    } finally {
      vi.restoreAllMocks();
      await app.close();
    }
  }, 30_000);
});

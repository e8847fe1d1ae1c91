/**
 * buildApp hands fastify schema compilers that load ajv and fast-json-stringify only when a route declares a
 * schema (src/server/app.ts, lazyCompilers): no cbwatch route does, so the HTTP thread never loads them. These
 * checks keep the builders equivalent to fastify's defaults once something does ask.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { lazyCompilers } from '../../src/server/app.js';

describe("fastify's schema compilers, loaded on first use", () => {
  it('validate a body and serialize a response as the defaults do', async () => {
    const app = Fastify({ schemaController: { compilersFactory: lazyCompilers() } });
    app.post(
      '/x',
      {
        schema: {
          body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
          response: { 200: { type: 'object', properties: { doubled: { type: 'integer' } } } },
        },
      },
      async (req) => ({ doubled: (req.body as { n: number }).n * 2, dropped: 'not in the response schema' }),
    );
    const ok = await app.inject({ method: 'POST', url: '/x', payload: { n: '21' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ doubled: 42 });
    const bad = await app.inject({ method: 'POST', url: '/x', payload: { m: 1 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'FST_ERR_VALIDATION', message: "body must have required property 'n'" });
    await app.close();
  });

});

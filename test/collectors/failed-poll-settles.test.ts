/**
 * A poll that fails on one answer ends when its other requests have settled (within its deadline), so every
 * request is recorded in the outcome with its own status (`cbwatch check` showed `network` for the requests
 * still out when the poll ended and the client was closed), and none runs on after the poll.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { securityCollector } from '../../src/collectors/security.js';
import type { Collector } from '../../src/collectors/types.js';
import { collect, fakeClient } from '../helpers/collect.js';

/**
 * A client answering /first 401 at once and /second 401 only after `release()`, and a probe requesting both
 * at once (/second through the poll client itself or through a scoped view of it); `siblingDone()` tells
 * whether /second has answered.
 */
function gatedSibling(second: 'same client' | 'scoped view'): { client: ReturnType<typeof fakeClient>; probe: Collector<'security'>; release(): void; siblingDone(): boolean } {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  let siblingDone = false;
  const client = fakeClient({
    '/first': { status: 401 },
    '/second': async () => {
      await gate;
      siblingDone = true;
      return { status: 401 };
    },
  });
  const probe: Collector<'security'> = {
    ...securityCollector,
    async collect(ctx) {
      const any = z.unknown();
      const via = second === 'scoped view' ? ctx.client.scoped({}) : ctx.client;
      await Promise.all([ctx.client.getJson('/first', {}, any), via.getJson('/second', {}, any)]);
    },
  };
  return { client, probe, release: () => release(), siblingDone: () => siblingDone };
}

describe('a failed poll waits for its outstanding requests', () => {
  it('records the sibling answered after the failing one, with its status', async () => {
    const { client, probe, release, siblingDone } = gatedSibling('same client');
    const polled = collect(probe, client);
    // The failing answer is in; the poll must still be waiting for /second.
    let ended = false;
    void polled.then(() => (ended = true));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(ended).toBe(false);
    release();
    const r = await polled;
    expect(siblingDone()).toBe(true);
    expect(r.ok).toBe(false);
    expect(r.requests.map((q) => `${q.endpoint} ${q.code}`).sort()).toEqual(['/first 401', '/second 401']);
  });

  it('through a scoped view of the poll client too', async () => {
    const { client, probe, release, siblingDone } = gatedSibling('scoped view');
    let ended = false;
    const polled = collect(probe, client).then((r) => ((ended = true), r));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(ended).toBe(false);
    release();
    expect((await polled).ok).toBe(false);
    expect(siblingDone()).toBe(true);
  });
});

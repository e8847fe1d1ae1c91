/**
 * A rotated password file is picked up without a restart: on a 401 the client reads the file again and
 * sends the request once more. The simulator changes its password; the test rewrites the file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../src/couchbase/client.js';
import type { RequestRecord } from '../../src/couchbase/client.js';
import { redact } from '../../src/redact.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';

const admin = { username: 'Administrator', password: 'first-password-1' };
let sim: Simulator;
let url: string;
beforeAll(async () => {
  sim = createSimulator({ users: { admin, limited: { username: 'ro', password: 'ro-password' } } });
  url = await sim.listen(0);
});
afterAll(async () => {
  await sim.close();
});

const any = z.unknown();

describe('password_file rotation', () => {
  it('re-reads the file on a 401 and retries once with the new password', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-pw-'));
    const file = join(dir, 'cb-password');
    writeFileSync(file, `${admin.password}\n`);
    const records: RequestRecord[] = [];
    const c = createClient({ cluster: 'c', url, username: admin.username, password: admin.password, passwordFile: file, observe: (_c, r) => records.push(r) });
    const fixed = createClient({ cluster: 'c', url, username: admin.username, password: admin.password });
    try {
      await c.getJson('/pools/default', {}, any);
      // Rotation: the cluster changes the password, the secret store rewrites the file.
      admin.password = 'second-password-2';
      writeFileSync(file, `${admin.password}\n`);
      await expect(c.getJson('/pools/default', {}, any)).resolves.toBeDefined();
      expect(records.at(-1)?.code).toBe('200');
      // The new password is a secret like the old one.
      expect(redact(`x ${admin.password} y`)).not.toContain(admin.password);
      // A password that came from elsewhere cannot be re-read: the 401 stays a failure.
      await expect(fixed.getJson('/pools/default', {}, any)).rejects.toMatchObject({ code: 'CBW_ERR_AUTH' });
    } finally {
      await c.close();
      await fixed.close();
    }
  });

  it('a file that still holds the old password leaves the 401 a failure', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-pw-'));
    const file = join(dir, 'cb-password');
    writeFileSync(file, `${admin.password}\n`);
    const c = createClient({ cluster: 'c', url, username: admin.username, password: admin.password, passwordFile: file });
    try {
      await c.getJson('/pools/default', {}, any);
      admin.password = 'third-password-3';
      await expect(c.getJson('/pools/default', {}, any)).rejects.toMatchObject({ code: 'CBW_ERR_AUTH' });
    } finally {
      await c.close();
    }
  });

  it('a wall-clock step back does not hold the next reread back for the size of the step', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-pw-'));
    const file = join(dir, 'cb-password');
    writeFileSync(file, `${admin.password}\n`);
    const c = createClient({ cluster: 'c', url, username: admin.username, password: admin.password, passwordFile: file });
    const realNow = Date.now;
    try {
      await c.getJson('/pools/default', {}, any);
      // A 401 while the file is not rewritten yet: the file is read (no change), and rereads pause for 5 s.
      admin.password = 'fourth-password-4';
      await expect(c.getJson('/pools/default', {}, any)).rejects.toMatchObject({ code: 'CBW_ERR_AUTH' });
      writeFileSync(file, `${admin.password}\n`);
      // NTP steps the wall clock back an hour. The pause is a duration: it still ends 5 s after that read
      // (before the fix it lasted until the wall clock caught up, an hour).
      vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000);
      const end = performance.now() + 20_000;
      let ok = false;
      while (!ok && performance.now() < end) {
        ok = await c.getJson('/pools/default', {}, any).then(
          () => true,
          () => false,
        );
        if (!ok) await new Promise((r) => setTimeout(r, 250));
      }
      expect(ok).toBe(true);
    } finally {
      vi.restoreAllMocks();
      await c.close();
    }
  }, 30_000);
});

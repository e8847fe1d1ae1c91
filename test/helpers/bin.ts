/** For the tests that run the real process (`bin/cbwatch.js`) against a simulator. */
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';

/** The executable the package ships. */
export const CBWATCH_BIN = join(import.meta.dirname, '..', '..', 'bin', 'cbwatch.js');

/**
 * A simulator (default options) on a real port for the calling test file: started before its tests, closed
 * after. Read `sim` and `url` inside the tests (they are set once the file's tests start).
 */
export function simulatorForFile(): { readonly sim: Simulator; readonly url: string } {
  const held = {} as { sim: Simulator; url: string };
  beforeAll(async () => {
    held.sim = createSimulator();
    held.url = await held.sim.listen(0);
  });
  afterAll(async () => {
    await held.sim.close();
  });
  return held;
}

/** Polls `fn` every 50 ms until it returns a value (not undefined), or throws `timed out waiting for ${what}` after `ms`. */
export async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

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

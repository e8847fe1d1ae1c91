/** What the scheduler tests share: a collector made of a `collect` function, and waiting for a condition. */
import type { Collector } from '../../src/collectors/types.js';
import type { CollectorName } from '../../src/config/schema.js';
import type { FamilyDef } from '../../src/metrics/family.js';

/** A collector named `name` that declares `families` and runs `collect` (role and description are placeholders). */
export function fakeCollector(name: CollectorName, families: readonly FamilyDef[], collect: Collector['collect'], defaultInterval = 60_000): Collector {
  return { name, defaultInterval, families: [...families], role: 'Read-Only Admin', description: 'test', collect } as Collector;
}

/** Resolves once `cond()` holds, checking every `stepMs`; throws after `ms`. */
export async function untilTrue(cond: () => boolean, ms = 10_000, stepMs = 20): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

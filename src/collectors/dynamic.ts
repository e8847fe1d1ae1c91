/**
 * Families created from names Couchbase sends (a bucket stat outside the catalog, an unknown cluster counter).
 * Such names are upstream data: a broken or hostile cluster can send new ones on every answer. The registry
 * lives in the (cluster, collector)'s state, holds at most `max` families used in the current poll, and
 * forgets, at the start of the next poll, every family the previous poll did not use — its series left
 * /metrics with that poll's snapshot, so the exporter's memory follows what Couchbase sends now.
 */
import { CLUSTER_SETTINGS } from '../config/settings.js';
import type { FamilyDef } from '../metrics/family.js';

/** Default of `max_dynamic_families`: families one collector may create from upstream names per poll. */
export const DEFAULT_MAX_DYNAMIC_FAMILIES = CLUSTER_SETTINGS.max_dynamic_families.default;

/** Key in a collector's `ctx.state`; starts with NUL so it can never be a bucket or replication name. */
export const DYNAMIC_STATE_KEY = '\u0000dynamic_families';

export class DynamicFamilies {
  /** Used in the current poll. */
  private current = new Map<string, FamilyDef>();
  /** Used in the previous poll only: reused when seen again, dropped at the next `beginPoll`. */
  private previous = new Map<string, FamilyDef>();

  constructor(readonly max: number = DEFAULT_MAX_DYNAMIC_FAMILIES) {}

  /** Start a poll: whatever the poll before did not use is forgotten. */
  beginPoll(): void {
    this.previous = this.current;
    this.current = new Map();
  }

  /** Whether `key` was used in this poll or the previous one (without taking it into this poll). */
  has(key: string): boolean {
    return this.current.has(key) || this.previous.has(key);
  }

  /**
   * The family for `key`, made by `create` on first sight. `'capped'` when the poll already holds `max`
   * families and this one is new to it: the caller leaves the stat out and counts it.
   */
  get(key: string, create: () => FamilyDef): FamilyDef | 'capped' {
    const hit = this.current.get(key);
    if (hit !== undefined) return hit;
    if (this.current.size >= this.max) return 'capped';
    const def = this.previous.get(key) ?? create();
    this.current.set(key, def);
    return def;
  }

  /** Families held (this poll's and the previous poll's), for tests and the churn soak. */
  get size(): number {
    let n = this.current.size;
    for (const k of this.previous.keys()) if (!this.current.has(k)) n++;
    return n;
  }

  /** The families this poll used. */
  families(): FamilyDef[] {
    return [...this.current.values()];
  }
}

/** The registry kept in a collector's state (created on first use, its cap following the configuration). */
export function dynamicFamiliesOf(state: Map<string, unknown>, max: number | undefined): DynamicFamilies {
  const want = max ?? DEFAULT_MAX_DYNAMIC_FAMILIES;
  let reg = state.get(DYNAMIC_STATE_KEY) as DynamicFamilies | undefined;
  if (reg === undefined || reg.max !== want) {
    reg = new DynamicFamilies(want);
    state.set(DYNAMIC_STATE_KEY, reg);
  }
  return reg;
}

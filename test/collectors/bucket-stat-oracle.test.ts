/**
 * The bucket stat catalog against an oracle outside cbwatch's code: ns_server's own list of which bucket stats
 * are gauges and which are counters (test/fixtures/ns_server-bucket-stat-kinds.json, with its provenance).
 * Counters reach the stats envelope as per-second rates, so the catalog must read them as rates; gauges are
 * levels, or `cumulative` counts (exported as `_total` counters) where ns_server says they count since start.
 * The simulator's own stat list (src/simulator/bucket-stat-names.ts) is held to the same facts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUCKET_STAT_CATALOG, statSpec } from '../../src/collectors/bucket-stat-catalog.js';
import { simStatClass } from '../../src/simulator/bucket-stat-names.js';

interface Oracle {
  readonly gauges: string[];
  readonly counters: string[];
  readonly cumulative_gauges: string[];
}

const oracle = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ns_server-bucket-stat-kinds.json'), 'utf8')) as Oracle;

/** Names of the oracle the catalog does not carry, on purpose (never seen in an envelope of a capture or the reference). */
const NOT_IN_CATALOG = new Set(['cmd_total_gets']);

describe('bucket stat catalog vs ns_server (include/ns_stats.hrl)', () => {
  it('the oracle is the list it claims to be', () => {
    expect(oracle.gauges).toHaveLength(72);
    expect(oracle.counters).toHaveLength(75);
    expect(new Set([...oracle.gauges, ...oracle.counters]).size).toBe(147);
    for (const c of oracle.cumulative_gauges) expect(oracle.gauges).toContain(c);
  });

  it('carries every stat ns_server samples', () => {
    const missing = [...oracle.gauges, ...oracle.counters].filter((n) => statSpec(n) === undefined && !NOT_IN_CATALOG.has(n));
    expect(missing).toEqual([]);
  });

  it('reads every ns_server counter as a per-second rate', () => {
    const wrong = oracle.counters.filter((n) => !NOT_IN_CATALOG.has(n)).filter((n) => statSpec(n)?.kind !== 'rate' || !statSpec(n)?.unit.endsWith('per_second'));
    expect(wrong).toEqual([]);
  });

  it('reads every ns_server gauge as a level, and the counts since start as cumulative counters', () => {
    const cumulative = new Set(oracle.cumulative_gauges);
    const wrong = oracle.gauges.filter((n) => statSpec(n)?.kind !== (cumulative.has(n) ? 'cumulative' : 'level'));
    expect(wrong).toEqual([]);
  });

  it('the simulator serves ns_server counters as rates and gauges as anything but rates', () => {
    expect(oracle.counters.filter((n) => !NOT_IN_CATALOG.has(n) && simStatClass(n) !== 'rate')).toEqual([]);
    expect(oracle.gauges.filter((n) => simStatClass(n) === undefined || simStatClass(n) === 'rate')).toEqual([]);
  });

  it('has no rate whose name says it is a level, in the stats the oracle does not cover either', () => {
    // Outside the oracle (system stats, TAP, pre-4.0 XDCR totals, computed stats) the catalog's own reasoning
    // applies; at least every `_per_second` family must come from a rate.
    for (const s of BUCKET_STAT_CATALOG) expect(s.metric.endsWith('per_second'), s.stat).toBe(s.kind === 'rate');
  });
});

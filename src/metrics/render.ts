/**
 * Exposition text from sample sets, rendered with prom-client. Families are merged across clusters and
 * collectors (one HELP/TYPE block per name) and written in name order, so output is stable for golden tests.
 */
import client from 'prom-client';
import type { FamilyDef, Labels, SampleSet } from './family.js';

export interface LabelledSet {
  /** Labels added to every sample of the set (e.g. `{ couchbase_cluster: 'prod' }`). */
  readonly base: Labels;
  readonly set: SampleSet;
}

interface Merged {
  def: FamilyDef;
  labelNames: string[];
  rows: Array<{ labels: Record<string, string>; value: number }>;
  keys: Set<string>;
}

function merge(sets: readonly LabelledSet[]): Map<string, Merged> {
  const out = new Map<string, Merged>();
  for (const { base, set } of sets) {
    const baseNames = Object.keys(base);
    for (const { def, samples } of set.families()) {
      let m = out.get(def.name);
      if (!m) {
        m = { def, labelNames: [...baseNames, ...def.labels], rows: [], keys: new Set() };
        out.set(def.name, m);
      }
      const names = m.labelNames;
      for (const s of samples) {
        const labels: Record<string, string> = { ...base, ...s.labels };
        // The same series from two sets (two collectors of one cluster) is written once, the first kept,
        // as SampleSet does within a set: a duplicate series would make Prometheus reject the whole scrape.
        const key = names.map((n) => labels[n]).join('\u0000');
        if (m.keys.has(key)) continue;
        m.keys.add(key);
        m.rows.push({ labels, value: s.value });
      }
    }
  }
  return out;
}

/**
 * A family as prom-client's registry sees a metric: it asks `get()` for name, help, type and values and
 * formats them (escaping, value strings, HELP/TYPE lines). Handing it the rows directly, instead of filling
 * a Gauge per family, skips prom-client's per-series label hashing and validation, which made up most of
 * the time and garbage of a render (26,800 series: 120 ms and ~90 MB of heap before, see bench/RESULTS.md).
 * The text is the same bytes; test/metrics/render.test.ts compares it with a Gauge/Counter rendering.
 */
class StaticFamily {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'gauge' | 'counter',
    private readonly rows: Merged['rows'],
  ) {}

  get(): { name: string; help: string; type: string; values: Merged['rows']; aggregator: 'sum' } {
    return { name: this.name, help: this.help, type: this.type, values: this.rows, aggregator: 'sum' };
  }
}

/** Render sets as Prometheus text (no trailing blank-line noise between families). */
export async function renderSets(sets: readonly LabelledSet[]): Promise<string> {
  const merged = merge(sets);
  const registry = new client.Registry();
  for (const name of [...merged.keys()].sort()) {
    const m = merged.get(name) as Merged;
    const counter = m.def.type === 'counter';
    // Counters never go below zero; a negative value from a payload is dropped, as prom-client's inc() would.
    const rows = counter ? m.rows.filter((r) => r.value >= 0) : m.rows;
    if (rows.length === 0) continue;
    registry.registerMetric(new StaticFamily(name, m.def.help, counter ? 'counter' : 'gauge', rows) as unknown as client.Metric);
  }
  const text = await registry.metrics();
  return text.replace(/\n\n+/g, '\n');
}

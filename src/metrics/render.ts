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
}

function merge(sets: readonly LabelledSet[]): Map<string, Merged> {
  const out = new Map<string, Merged>();
  for (const { base, set } of sets) {
    const baseNames = Object.keys(base);
    for (const { def, samples } of set.families()) {
      let m = out.get(def.name);
      if (!m) {
        m = { def, labelNames: [...baseNames, ...def.labels], rows: [] };
        out.set(def.name, m);
      }
      for (const s of samples) m.rows.push({ labels: { ...base, ...s.labels }, value: s.value });
    }
  }
  return out;
}

/** Render sets as Prometheus text (no trailing blank-line noise between families). */
export async function renderSets(sets: readonly LabelledSet[]): Promise<string> {
  const merged = merge(sets);
  const registry = new client.Registry();
  for (const name of [...merged.keys()].sort()) {
    const m = merged.get(name) as Merged;
    if (m.rows.length === 0) continue;
    if (m.def.type === 'counter') {
      const c = new client.Counter({ name, help: m.def.help, labelNames: m.labelNames, registers: [registry] });
      for (const r of m.rows) if (r.value >= 0) c.inc(r.labels, r.value);
    } else {
      const g = new client.Gauge({ name, help: m.def.help, labelNames: m.labelNames, registers: [registry] });
      for (const r of m.rows) g.set(r.labels, r.value);
    }
  }
  const text = await registry.metrics();
  return text.replace(/\n\n+/g, '\n');
}

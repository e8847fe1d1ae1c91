/**
 * The metric catalog: every family cbwatch can expose — self-metrics, webhook metrics and each collector's
 * families. docs/metrics.md is generated from it, and tests check that every metric used by a dashboard or
 * an alert exists in it. It sits above the modules whose families it gathers, as the daemon does.
 */
import { collectorList } from './collectors/index.js';
import type { FamilyDef } from './metrics/family.js';
import { WEBHOOK_FAMILIES } from './webhooks/sync-gateway.js';
import { SELF_FAMILIES } from './metrics/self-families.js';

export function allFamilies(): FamilyDef[] {
  const out: FamilyDef[] = [...SELF_FAMILIES, ...WEBHOOK_FAMILIES];
  for (const c of collectorList()) out.push(...c.families);
  const seen = new Map<string, FamilyDef>();
  for (const f of out) {
    const prev = seen.get(f.name);
    if (prev && prev !== f) throw new Error(`metric ${f.name} declared by both ${prev.collector} and ${f.collector}`);
    seen.set(f.name, f);
  }
  return [...seen.values()];
}

/** Names as they appear in the exposition (histograms expand to _bucket, _sum, _count). */
export function exposedNames(): Set<string> {
  const names = new Set<string>();
  for (const f of allFamilies()) {
    if (f.type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(f.name + s);
    else names.add(f.name);
  }
  return names;
}

/**
 * Exposition text from sample sets. Families are merged across clusters and collectors (one HELP/TYPE block
 * per name) and written in name order, so output is stable for golden tests.
 *
 * The text is the bytes prom-client's registry writes for the same samples (same HELP escaping, label
 * escaping and order, value strings such as `+Inf`), and test/metrics/render.test.ts holds it to that by
 * rendering the same sets through prom-client Gauges and Counters. It is written here rather than by
 * prom-client because prom-client formats every series through several intermediate arrays and strings:
 * at 26,800 series (100 buckets) a render cost ~110 ms and ~75 MB of short-lived heap for 2.8 MB of text,
 * which set the exporter's peak memory. Written directly, it is ~40 ms and ~20 MB (bench/RESULTS.md).
 * prom-client still renders cbwatch's own self-metrics and the process metrics.
 */
import type { FamilyDef, Labels, SampleSet } from './family.js';

export interface LabelledSet {
  /** Labels added to every sample of the set (e.g. `{ couchbase_cluster: 'prod' }`). */
  readonly base: Labels;
  readonly set: SampleSet;
}

/** As prom-client: backslash and newline escaped in HELP text and label values, and `"` in label values. */
function escapeHelp(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabelValue(s: string): string {
  return escapeHelp(s).replace(/"/g, '\\"');
}

function labelPairs(labels: Labels): string {
  let out = '';
  for (const k in labels) {
    const v = labels[k] as string;
    out += `${out === '' ? '' : ','}${k}="${escapeLabelValue(v)}"`;
  }
  return out;
}

/** As prom-client's getValueAsString. */
function valueString(v: number): string {
  if (Number.isNaN(v)) return 'Nan';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return `${v}`;
}

interface Merged {
  def: FamilyDef;
  /** `name{labels}` of each series, for de-duplication across sets. */
  seen: Set<string>;
  lines: string[];
}

/** Render sets as Prometheus text, each family a HELP and TYPE line followed by its series. */
export async function renderSets(sets: readonly LabelledSet[]): Promise<string> {
  const merged = new Map<string, Merged>();
  for (const { base, set } of sets) {
    const basePairs = labelPairs(base);
    for (const { def, samples } of set.families()) {
      let m = merged.get(def.name);
      if (!m) {
        m = { def, seen: new Set(), lines: [] };
        merged.set(def.name, m);
      }
      const counter = def.type === 'counter';
      for (const s of samples) {
        // Counters never go below zero; a negative value from a payload is dropped, as prom-client's inc() would.
        if (counter && s.value < 0) continue;
        const own = labelPairs(s.labels);
        const pairs = basePairs === '' ? own : own === '' ? basePairs : `${basePairs},${own}`;
        const series = pairs === '' ? def.name : `${def.name}{${pairs}}`;
        // The same series from two sets (two collectors of one cluster) is written once, the first kept,
        // as SampleSet does within a set: a duplicate series would make Prometheus reject the whole scrape.
        if (m.seen.has(series)) continue;
        m.seen.add(series);
        m.lines.push(`${series} ${valueString(s.value)}\n`);
      }
    }
  }
  const out: string[] = [];
  for (const name of [...merged.keys()].sort()) {
    const m = merged.get(name) as Merged;
    if (m.lines.length === 0) continue;
    out.push(`# HELP ${name} ${escapeHelp(m.def.help)}\n# TYPE ${name} ${m.def.type}\n`);
    for (const line of m.lines) out.push(line);
  }
  return out.join('');
}

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

const NEEDS_ESCAPE = /[\\\n"]/;

function escapeLabelValue(s: string): string {
  return NEEDS_ESCAPE.test(s) ? escapeHelp(s).replace(/"/g, '\\"') : s;
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

/** One family's series lines from one set. */
interface Block {
  readonly def: FamilyDef;
  readonly text: string;
}

/**
 * Each set's text, kept while the set lives (the store holds a set until its collector's next poll), when the
 * render has several sets: a render after one cluster's poll then writes only that cluster's series anew and
 * reuses the other clusters' text. A render of one set (one cluster) keeps nothing: its next render is of a new
 * set, and the text would only double the memory its part already takes (26 MB at 1,000 buckets).
 */
const blocksOf = new WeakMap<SampleSet, { readonly base: string; readonly blocks: readonly Block[] }>();

function setBlocks(base: Labels, set: SampleSet, keep: boolean): readonly Block[] {
  const basePairs = labelPairs(base);
  const hit = blocksOf.get(set);
  if (hit !== undefined && hit.base === basePairs) return hit.blocks;
  const blocks: Block[] = [];
  // Collectors pass one labels object to many families (a bucket's ~200 stats share `{ bucket }`): its text
  // is made once per render.
  const pairsOf = new Map<Labels, string>();
  for (const { def, samples } of set.families()) {
    const counter = def.type === 'counter';
    const lines: string[] = [];
    for (const s of samples) {
      // Counters never go below zero; a negative value from a payload is dropped, as prom-client's inc() would.
      if (counter && s.value < 0) continue;
      let pairs = pairsOf.get(s.labels);
      if (pairs === undefined) {
        const own = labelPairs(s.labels);
        pairs = basePairs === '' ? own : own === '' ? basePairs : `${basePairs},${own}`;
        pairsOf.set(s.labels, pairs);
      }
      lines.push(`${pairs === '' ? def.name : `${def.name}{${pairs}}`} ${valueString(s.value)}\n`);
    }
    if (lines.length > 0) blocks.push({ def, text: lines.join('') });
  }
  if (keep) blocksOf.set(set, { base: basePairs, blocks });
  return blocks;
}

/**
 * Render sets as Prometheus text, each family a HELP and TYPE line followed by its series from every set.
 * A set never repeats a series (SampleSet keeps the first), and two sets never share one: every family
 * belongs to one collector (the catalog refuses a family declared by two) and each set carries its own
 * cluster's label, or none for the store's status set, whose families no collector declares.
 */
export function renderSets(sets: readonly LabelledSet[]): string {
  const merged = new Map<string, { def: FamilyDef; texts: string[] }>();
  for (const { base, set } of sets) {
    for (const b of setBlocks(base, set, sets.length > 1)) {
      const m = merged.get(b.def.name);
      if (m) m.texts.push(b.text);
      else merged.set(b.def.name, { def: b.def, texts: [b.text] });
    }
  }
  const out: string[] = [];
  for (const name of [...merged.keys()].sort()) {
    const m = merged.get(name) as { def: FamilyDef; texts: string[] };
    out.push(`# HELP ${name} ${escapeHelp(m.def.help)}\n# TYPE ${name} ${m.def.type}\n`);
    for (const t of m.texts) out.push(t);
  }
  return out.join('');
}

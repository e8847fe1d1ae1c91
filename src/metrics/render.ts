/**
 * Exposition text from sample sets. Families are merged across clusters and collectors (one HELP/TYPE block
 * per name) and written in name order, so output is stable for golden tests.
 *
 * The text is the bytes prom-client's registry writes for the same samples (same HELP escaping, label
 * escaping and order, value strings such as `+Inf`), and test/metrics/render.test.ts holds it to that by
 * rendering the same sets through prom-client Gauges and Counters. It is written here rather than by
 * prom-client because prom-client formats every series through several intermediate arrays and strings, whose
 * short-lived heap set the exporter's peak memory at scale; written directly, a render takes a fraction of that
 * time and heap (bench/RESULTS.md has the figures).
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

/**
 * Where rendered text goes: a string (tests, small parts) or bytes (a part). The renderer writes each line as
 * it is made, so nothing but the sink holds the text: no per-family arrays of lines, no joined copy of the
 * whole exposition (at scale those copies were twice the text, alive at once, and most of the collection
 * thread's survivors in a young-generation GC).
 */
export interface TextSink {
  write(s: string): void;
}

/** Collects the text as a string. */
class StringSink implements TextSink {
  private readonly parts: string[] = [];
  write(s: string): void {
    this.parts.push(s);
  }
  text(): string {
    return this.parts.join('');
  }
}

/**
 * One family's series from one set: their text, when the set's text is kept (see blocksOf), or the samples to
 * write it from, with the set's base label pairs and the text of each labels object's pairs made so far.
 */
type Block =
  | { readonly def: FamilyDef; readonly text: string }
  | {
      readonly def: FamilyDef;
      readonly labels: readonly Labels[];
      readonly values: readonly number[];
      readonly basePairs: string;
      readonly pairsOf: Map<Labels, string>;
    };

/**
 * Each set's text, kept while the set lives (the store holds a set until its collector's next poll), when the
 * render has several sets: a render after one cluster's poll then writes only that cluster's series anew and
 * reuses the other clusters' text. A render of one set (one cluster) keeps nothing and writes its lines
 * straight to the sink: its next render is of a new set, and the text would only double the memory its part
 * already takes.
 */
const blocksOf = new WeakMap<SampleSet, { readonly base: string; readonly blocks: readonly Block[] }>();

/** Write one family's series lines from one set. */
function writeLines(sink: TextSink, def: FamilyDef, labels: readonly Labels[], values: readonly number[], basePairs: string, pairsOf: Map<Labels, string>): void {
  const counter = def.type === 'counter';
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as number;
    // Counters never go below zero; a negative value from a payload is dropped, as prom-client's inc() would.
    if (counter && value < 0) continue;
    // Collectors pass one labels object to many families (a bucket's ~200 stats share `{ bucket }`): its text
    // is made once per render.
    const l = labels[i] as Labels;
    let pairs = pairsOf.get(l);
    if (pairs === undefined) {
      const own = labelPairs(l);
      pairs = basePairs === '' ? own : own === '' ? basePairs : `${basePairs},${own}`;
      pairsOf.set(l, pairs);
    }
    sink.write(`${pairs === '' ? def.name : `${def.name}{${pairs}}`} ${valueString(value)}\n`);
  }
}

/** Does the family have a line to write (a counter's negative values are not written)? */
function hasLines(def: FamilyDef, values: readonly number[]): boolean {
  if (def.type !== 'counter') return values.length > 0;
  for (const v of values) if (v >= 0) return true;
  return false;
}

function setBlocks(base: Labels, set: SampleSet, keep: boolean): readonly Block[] {
  const basePairs = labelPairs(base);
  const hit = blocksOf.get(set);
  if (hit !== undefined && hit.base === basePairs) return hit.blocks;
  const blocks: Block[] = [];
  const pairsOf = new Map<Labels, string>();
  for (const { def, labels, values } of set.columns()) {
    if (!hasLines(def, values)) continue;
    if (keep) {
      const sink = new StringSink();
      writeLines(sink, def, labels, values, basePairs, pairsOf);
      blocks.push({ def, text: sink.text() });
    } else blocks.push({ def, labels, values, basePairs, pairsOf });
  }
  if (keep) blocksOf.set(set, { base: basePairs, blocks });
  return blocks;
}

/**
 * Render sets as Prometheus text into `sink`, each family a HELP and TYPE line followed by its series from
 * every set. A set never repeats a series (SampleSet keeps the first), and two sets never share one: every
 * family belongs to one collector (the catalog refuses a family declared by two) and each set carries its own
 * cluster's label, or none for the store's status set, whose families no collector declares.
 */
export function renderSetsTo(sink: TextSink, sets: readonly LabelledSet[]): void {
  const merged = new Map<string, { def: FamilyDef; blocks: Block[] }>();
  for (const { base, set } of sets) {
    for (const b of setBlocks(base, set, sets.length > 1)) {
      const m = merged.get(b.def.name);
      if (m) m.blocks.push(b);
      else merged.set(b.def.name, { def: b.def, blocks: [b] });
    }
  }
  for (const name of [...merged.keys()].sort()) {
    const m = merged.get(name) as { def: FamilyDef; blocks: Block[] };
    sink.write(`# HELP ${name} ${escapeHelp(m.def.help)}\n# TYPE ${name} ${m.def.type}\n`);
    for (const b of m.blocks) {
      if ('text' in b) sink.write(b.text);
      else writeLines(sink, b.def, b.labels, b.values, b.basePairs, b.pairsOf);
    }
  }
}

/** The exposition text of `sets` (see renderSetsTo). */
export function renderSets(sets: readonly LabelledSet[]): string {
  const sink = new StringSink();
  renderSetsTo(sink, sets);
  return sink.text();
}

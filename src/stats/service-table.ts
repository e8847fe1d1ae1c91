/**
 * The service statistics tables: what a service collector (query, index, Search, eventing, analytics, processes)
 * declares of its statistics, and the registry the shared range request reads (service-range.ts).
 *
 * A ServiceSpec is one item shape of one service: its rows (one per stat), the nodes it runs on, the labels that
 * name an item in the native series, and where its legacy envelope keys are. A collector whose service has two
 * item shapes (the index service: per index, and per index node) declares two specs. Each spec is one query of the
 * shared range request (a regex over its rows' native names), and one or more envelope sections.
 *
 * A row says how one stat is read from either source, in the same unit:
 * - `level`: the newest sample (envelope) or point (range);
 * - `rate`: per second since the previous poll: the mean of the envelope's per-second samples since then, or the
 *   exact increase of the native counter since the previous poll's newest point, per second;
 * - `total`: a running total Couchbase keeps (eventing's figures): the newest sample or point, exported as a counter;
 * - `mean_of_two`: a mean per event, the ratio of two counters' increases over the same window (envelope: of the
 *   means of their per-second samples over the same samples); absent when the denominator did not increase.
 * `scale` takes the source's unit to the family's (1e-9 for nanoseconds to seconds; 0.01 for a percentage), and
 * the values handed to the collector are in the family's unit.
 */
import type { StatsContext } from './context.js';
import type { ValueKind } from './values.js';

export type ServiceStatKind = 'level' | 'rate' | 'total' | 'mean_of_two';

export interface ServiceStatRow {
  /**
   * The stat's name among the spec's values: its legacy key in the envelope (for a per-item section the part after
   * `<prefix>/<item>/`, e.g. `num_docs_pending`; for a node section the whole key, e.g. `query_requests`).
   */
  readonly stat: string;
  readonly kind: ServiceStatKind;
  /**
   * The native 7.x metric (for `mean_of_two`, the numerator's counter); undefined when the range API has no
   * equivalent (the value is then absent on 7.x).
   */
  readonly native?: string | undefined;
  /**
   * The legacy key when it differs from `stat` (`mean_of_two`: the numerator's legacy counter); null when the
   * envelope has no such stat (a 7.x-only value, absent before 7.0).
   */
  readonly legacy?: string | null;
  /** `mean_of_two`: the denominator's counter, legacy key and native metric. */
  readonly per?: { readonly legacy: string | null; readonly native: string | undefined };
  /** Source unit → family unit, both sources (default 1). */
  readonly scale?: number;
  /** The native metric's unit differs from the legacy stat's: this scale for the range source instead. */
  readonly nativeScale?: number;
  /** The value may be below 0 (else a negative point of the native series is refused and counted). */
  readonly signed?: true;
  /** Native series matchers besides the item's labels (e.g. `{mode: 'user'}`): a series not matching is not read. */
  readonly matchers?: Readonly<Record<string, string>>;
}

/** Where a spec's stats are in the legacy envelopes (before 7.0). */
export interface ServiceEnvelope {
  /**
   * The sections to ask (without the `@`), e.g. `['query']`, `['index-travel', 'index-beer']`. A function for
   * sections that depend on the cluster (per bucket).
   */
  readonly sections: readonly string[] | ((ctx: StatsContext) => Promise<readonly string[]>);
  /**
   * A sample key of `section` → its item and stat (`index/<I>/<stat>` in `index-<b>` → item `b/…/I`, stat), or
   * undefined for a key the spec does not read. Absent: the key is the stat and the item is the node (node-level).
   */
  readonly keyOf?: (section: string, key: string) => { readonly item: string; readonly stat: string } | undefined;
}

export interface ServiceSpec {
  /** Unique among specs: the query's key in the shared request and in notes (e.g. `query`, `index_items`). */
  readonly id: string;
  /** The collector that declares it: it is asked for only while that collector is enabled. */
  readonly collector: string;
  /** The service's name in /pools/default `nodes[].services` (`n1ql`, `index`, `fts`, `eventing`, `cbas`); `*`: every node. */
  readonly service: string;
  readonly rows: readonly ServiceStatRow[];
  /**
   * The native labels that name an item, in order (e.g. `['bucket', 'scope', 'collection', 'index']`); empty for
   * node-level stats, whose item is the node.
   */
  readonly itemLabels: readonly string[];
  /**
   * True: values per node (sets keyed by node; envelope: the per-node route of each service node). False: one
   * value per item summed over the nodes (set ITEM_WIDE; envelope: the cluster-wide answer, which sums the nodes).
   */
  readonly perNode: boolean;
  /** The envelope side; undefined when the envelopes do not serve the stats (`processes`): not applicable there. */
  readonly envelope?: ServiceEnvelope | undefined;
  /** Why there is no envelope source (the not-applicable reason before 7.0). */
  readonly noEnvelope?: string;
  /**
   * Whether every node of the service has series (values) of its own, so that a node without any, while others
   * have some, is missing (an item failure) rather than a node with nothing to report. Default: node-level specs
   * (no item labels); a per-item spec (indexes) may have nodes that hold no item.
   */
  readonly everyNode?: boolean;
  /** A native item's key from its item labels' values (default: ITEM_KEY join). */
  readonly itemOf?: (values: readonly string[]) => string;
}

/** Separator of an item key's parts (a character no bucket, scope, collection, index or function name holds). */
export const ITEM_SEP = '\u001f';

/** An item's key from its parts (bucket, scope, collection, index …). */
export function itemKey(parts: readonly string[]): string {
  return parts.join(ITEM_SEP);
}

/** The parts of an item key. */
export function itemParts(key: string): string[] {
  return key.split(ITEM_SEP);
}

/** Whether every node of the spec's service has values of its own (ServiceSpec.everyNode). */
export function everyNode(spec: ServiceSpec): boolean {
  return spec.everyNode ?? spec.itemLabels.length === 0;
}

/** The neutral kind of a row's values. */
export function kindOfServiceRow(row: ServiceStatRow): ValueKind {
  return row.kind === 'rate' ? 'rate' : row.kind === 'mean_of_two' ? 'mean' : 'level';
}

/** The native metrics a row reads. */
export function nativeMetrics(row: ServiceStatRow): string[] {
  return [row.native, row.kind === 'mean_of_two' ? row.per?.native : undefined].filter((m): m is string => m !== undefined);
}

/** The legacy keys a row reads (numerator, denominator). */
export function legacyKeys(row: ServiceStatRow): { num: string | undefined; den: string | undefined } {
  const num = row.legacy === null ? undefined : (row.legacy ?? row.stat);
  const den = row.kind === 'mean_of_two' ? (row.per?.legacy ?? undefined) : undefined;
  return { num, den };
}

/** The declared specs, by id: what the shared range request may ask. */
const SPECS = new Map<string, ServiceSpec>();

/**
 * Rows of stats whose legacy key and native name differ by a prefix only (`index_` + `items_count`): `counters` are
 * rates, the others levels (or `otherKind`).
 */
export function prefixedRows(stats: readonly string[], counters: ReadonlySet<string>, nativePrefix: string, otherKind: 'level' | 'total' = 'level'): ServiceStatRow[] {
  return stats.map((stat) => ({ stat, kind: counters.has(stat) ? 'rate' : otherKind, native: `${nativePrefix}${stat}` }));
}

/**
 * Declare a spec (at module load, by the collector that owns it): the shared range request asks every declared
 * spec whose collector is enabled and whose service the cluster runs. Returns the spec, frozen.
 */
export function declareServiceStats(spec: ServiceSpec): ServiceSpec {
  const frozen = Object.freeze({ ...spec, rows: Object.freeze([...spec.rows]), itemLabels: Object.freeze([...spec.itemLabels]) });
  SPECS.set(spec.id, frozen);
  return frozen;
}

/** The declared specs, in declaration order. */
export function declaredServiceSpecs(): readonly ServiceSpec[] {
  return [...SPECS.values()];
}

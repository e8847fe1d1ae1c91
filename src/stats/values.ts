/**
 * Neutral values: what both statistics sources answer, the sample envelopes (before 7.0, and on request) and the
 * range API (7.0+), so that a collector maps one shape to its families whichever source answered.
 *
 * Per item (a bucket, a replication): its values per label set (the item's own, or one node's), stat by stat under
 * Couchbase's legacy stat name and in that stat's Couchbase unit; the kind of each value; the instants they
 * describe. A value is already this poll's: a level is the newest sample, a rate the mean (envelope) or exact
 * increase per second (range) since the previous poll, a mean the window's mean or ratio. A stat the answer names
 * without a value is present as `undefined` (a family is not invented from it, and nothing is exported); a stat
 * the answer does not name is absent. What could not be read is reported to the poll as it is found (its
 * context's skipped and itemFailed; the range source's missing nodes in `gaps`): an item whose values could not be
 * read at all is absent, and a source that could read nothing throws.
 */
import type { StatsGaps } from '../metrics/family.js';

/** How a value was made: the newest sample, a per-second rate since the previous poll, a window mean or ratio. */
export type ValueKind = 'level' | 'rate' | 'mean';

/** The key of an item's own label set (a bucket's bucket-wide values) among its sets; any other key is a node. */
export const ITEM_WIDE = '';

/** Stat (Couchbase's name) → value in Couchbase's unit; `undefined`: named by the answer, without a value. */
export type StatValues = Map<string, number | undefined>;

export interface ItemValues {
  /** Label set (ITEM_WIDE, or a node's name) → its values, in the order the sets were read. */
  readonly sets: Map<string, StatValues>;
  /** The newest sample time (epoch ms) among this poll's answers for the item; undefined when none had one. */
  newest: number | undefined;
  /**
   * The oldest sample time (epoch ms) of values exported again from an earlier poll's answer (the envelope
   * source's slow XDCR tier); undefined when none is.
   */
  kept?: number | undefined;
  /** The busiest keys, when the source reads them (the bucket envelope at zoom=minute). */
  hotKeys?: ReadonlyArray<{ readonly name: string; readonly ops: number }>;
}

/** One poll's neutral values. */
export interface SourceValues {
  /** Item → its values, in the order the collector listed the items. */
  readonly items: ReadonlyMap<string, ItemValues>;
  /** The kind of a stat's values. */
  kindOf(stat: string): ValueKind;
  /** The range source's missing nodes and dropped points this poll (undefined for the envelopes). */
  readonly gaps?: StatsGaps | undefined;
}

/** An item's values, made empty when it has none yet. */
export function itemOf(items: Map<string, ItemValues>, item: string): ItemValues {
  let v = items.get(item);
  if (v === undefined) {
    v = { sets: new Map(), newest: undefined };
    items.set(item, v);
  }
  return v;
}

/** A label set of an item, made empty when it has none yet. */
export function setOf(item: ItemValues, key: string): StatValues {
  let s = item.sets.get(key);
  if (s === undefined) {
    s = new Map();
    item.sets.set(key, s);
  }
  return s;
}

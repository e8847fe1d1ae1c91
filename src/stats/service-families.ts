/**
 * From a service spec's neutral values to families, for the node-level and per-node-item shapes: each family names
 * the stat it exports and the labels its item and node take. A value `undefined` (named without a value this poll)
 * and a stat not served are both left out: no series, never a zero. Items and nodes in code-unit order, so a poll's
 * series come in the same order whichever source answered.
 */
import type { FamilyDef, Labels } from '../metrics/family.js';
import { byCodeUnit } from '../text-order.js';
import { itemParts } from './service-table.js';
import type { SourceValues } from './values.js';

/** Where a family's value is: its stat, and fixed labels it adds (e.g. `{over: '0.25'}`). */
export interface ServiceFamily {
  readonly def: FamilyDef;
  readonly stat: string;
  readonly labels?: Labels;
}

/** A sample sink (a poll's SampleSet). */
export interface FamilySink {
  add(def: FamilyDef, labels: Labels, value: number | undefined): void;
}

/**
 * Add every family's value per item and label set. `labelsOf(item parts, set)` gives the series' labels (node-level:
 * `{node: set}`; per process: `{node: set, process: parts[0]}`). Pure but for `out`.
 */
export function addServiceFamilies(out: FamilySink, values: SourceValues, families: readonly ServiceFamily[], labelsOf: (parts: readonly string[], set: string) => Labels): void {
  const items = [...values.items.keys()].sort(byCodeUnit);
  for (const f of families) {
    for (const item of items) {
      const iv = values.items.get(item);
      if (iv === undefined) continue;
      const parts = itemParts(item);
      for (const set of [...iv.sets.keys()].sort(byCodeUnit)) {
        const v = iv.sets.get(set)?.get(f.stat);
        if (v === undefined) continue;
        out.add(f.def, { ...labelsOf(parts, set), ...(f.labels ?? {}) }, v);
      }
    }
  }
}

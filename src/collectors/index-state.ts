/**
 * The index state as the cluster manager reports it in GET /indexStatus: a pure mapping from its answer to the
 * `index` collector's state families. Kept apart from the collector file so that the index statistics can be
 * added beside it without touching the state mapping.
 *
 * What a series is: one index instance, that is one replica of an index (ns_server lists every replica as an
 * entry of its own and consolidates the partitions of a partitioned replica into it, the indexer's
 * request_handler.go `consolidateIndexStatus`). Labels: `bucket`, `scope`, `collection`, `index` (the N1QL name,
 * `indexName`; the display name `index` is decorated and never a label) and `replica` (`replicaId`; before 7.0,
 * which has no `replicaId`, the `(replica N)` of the display name, else 0). Before 7.0 there are no scopes or
 * collections: such an index lives in what 7.0 calls `_default`.`_default`, and the indexer itself fills in those
 * names for a definition without them (`IndexDefn.SetCollectionDefaults`), so a 6.x answer gets `_default` for
 * both and an index keeps its series across the upgrade.
 *
 * Where an instance lives: `couchbase_index_node_partitions` per node from `partitionMap` (a non-partitioned
 * index has the single partition 0); without a partition map (Community Edition, where no index is
 * partitioned) each of `hosts` holds the one partition.
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { indexStatusEntrySchema, INDEX_STATUS_ROUTE } from '../couchbase/indexStatus.js';
import type { IndexStatusAnswer, IndexStatusEntry } from '../couchbase/indexStatus.js';
import { MAX_INVALID_SHOWN, notAnObject } from '../couchbase/source.js';
import { CbwError, summariseIssues } from '../errors.js';
import { byCodeUnit } from '../text-order.js';
import { oneHot } from './helpers.js';
import type { ItemSink } from './helpers.js';
import type { Skip } from './types.js';

const C = 'index';
const INSTANCE = ['bucket', 'scope', 'collection', 'index', 'replica'] as const;

/** The state label values, in the order they are exported. */
export const INDEX_STATES = ['ready', 'building', 'created', 'moving', 'error', 'paused', 'warmup', 'not_available'] as const;

export const INDEX_STATE_FAMILIES = {
  state: defineFamily(
    C,
    'couchbase_index_state',
    'gauge',
    'State of the index replica as /indexStatus reports it, one-hot: ready, building (initial build or catch-up), created (defined but not built: deferred), moving (rebalance pending), error, paused, warmup, not_available. The storage-mode change forms (Building/Created (Upgrading|Downgrading)) count as building/created; any other status the server reports is exported under its own lower-cased name.',
    [...INSTANCE, 'state'],
  ),
  progress: defineFamily(C, 'couchbase_index_build_progress_ratio', 'gauge', 'Build progress of the index replica, 0–1 (the server reports an integer percent; 1 once built).', [...INSTANCE], 'ratio'),
  lastScan: defineFamily(
    C,
    'couchbase_index_last_scan_timestamp_seconds',
    'gauge',
    'When the index replica was last scanned, as the indexer reports it; absent when it has not been scanned (NA) or the time is given in a zone other than UTC or a numeric offset.',
    [...INSTANCE],
    'timestamp_seconds',
  ),
  partitions: defineFamily(
    C,
    'couchbase_index_node_partitions',
    'gauge',
    'Partitions of the index replica held on the node (1 for a non-partitioned index, on the node that holds it).',
    [...INSTANCE, 'node'],
    'count',
  ),
  stale: defineFamily(
    C,
    'couchbase_index_status_stale',
    'gauge',
    'Whether /indexStatus is stale: 1 when the cluster manager warns it could not reach an indexer (the states are then its last known ones) or an index reports stale status, else 0.',
  ),
} as const satisfies Record<string, FamilyDef>;

const F = INDEX_STATE_FAMILIES;

/** A status string → its state label value: the base state, lower-cased, words joined by `_`. */
export function indexStateLabel(status: string): string {
  const base = status.replace(/\s*\((upgrading|downgrading)\)\s*$/i, '');
  return base
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Go's `time.UnixDate` layout, `Mon Jan _2 15:04:05 MST 2006`; the zone is an abbreviation or `-0700`. */
const UNIX_DATE_RE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\S+) (\d{4})$/;

/**
 * Epoch seconds of a `lastScanTime`, or undefined for `NA`, anything not in Go's UnixDate layout, an impossible
 * date, and a zone abbreviation other than UTC/GMT: abbreviations are ambiguous (CST is three zones), and a
 * wrong offset would be a wrong number.
 */
export function parseLastScanTime(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const m = UNIX_DATE_RE.exec(s.trim());
  if (!m) return undefined;
  const [, mon, day, hh, mm, ss, zone, year] = m as unknown as [string, string, string, string, string, string, string, string];
  let offsetMin: number;
  if (zone === 'UTC' || zone === 'GMT') offsetMin = 0;
  else {
    const z = /^([+-])(\d{2})(\d{2})$/.exec(zone);
    if (!z) return undefined;
    offsetMin = (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3]));
  }
  const month = MONTHS.indexOf(mon);
  const d = Number(day);
  const utc = Date.UTC(Number(year), month, d, Number(hh), Number(mm), Number(ss));
  if (new Date(Date.UTC(Number(year), month, d)).getUTCDate() !== d || Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 60) return undefined;
  return (utc - offsetMin * 60_000) / 1000;
}

/** The replica of an entry: `replicaId` (7.0+), else the `(replica N)` of its display name, else 0. */
export function replicaOf(e: IndexStatusEntry): string {
  if (e.replicaId !== undefined) return String(e.replicaId);
  const m = / \(replica (\d+)\)$/.exec(e.index ?? '');
  return m ? String(Number(m[1])) : '0';
}

/** The labels that name an entry's index instance. */
export function instanceLabels(e: IndexStatusEntry): Record<(typeof INSTANCE)[number], string> {
  return { bucket: e.bucket, scope: e.scope ?? '_default', collection: e.collection ?? '_default', index: e.indexName, replica: replicaOf(e) };
}

/**
 * One /indexStatus answer → the state families. Pure. Each entry is an item: one that does not parse is
 * reported to `items` as failed (or counted through `skip` without a sink) and costs only its own series.
 * Returns the warnings of the answer, for the poll's notes.
 */
export function mapIndexStatus(answer: IndexStatusAnswer, out: SampleSet, skip: Skip, items?: ItemSink): readonly string[] {
  const entries: IndexStatusEntry[] = [];
  let described = 0;
  let counted = 0;
  for (const [i, raw] of answer.indexes.entries()) {
    const wrong = notAnObject(raw);
    const r = wrong === undefined ? indexStatusEntrySchema.safeParse(raw) : undefined;
    if (r?.success === true) {
      entries.push(r.data);
      continue;
    }
    if (items && described >= MAX_INVALID_SHOWN) {
      counted++;
      continue;
    }
    described++;
    const name = (raw as { indexName?: unknown } | null)?.indexName;
    const item = `index ${typeof name === 'string' ? name.slice(0, 60) : `#${i}`}`;
    if (items) items.failed(item, new CbwError('CBW_ERR_SCHEMA', `GET ${INDEX_STATUS_ROUTE}: ${item}: ${r === undefined ? wrong : summariseIssues(r.error.issues)}`));
    else skip('index_unparseable', item);
  }
  if (counted > 0) items?.failed(`${counted} more indexes`, new CbwError('CBW_ERR_SCHEMA', `GET ${INDEX_STATUS_ROUTE}: ${counted} more entries do not parse`), counted);

  // Sorted, so the exposition does not depend on the order the cluster manager lists the indexes in.
  const keyed = entries.map((e) => ({ e, labels: instanceLabels(e) }));
  keyed.sort((a, b) => {
    for (const k of INSTANCE) {
      const c = byCodeUnit(a.labels[k], b.labels[k]);
      if (c !== 0) return c;
    }
    return 0;
  });
  const warnings = answer.warnings ?? [];
  let stale = warnings.length > 0;
  for (const { e, labels } of keyed) {
    if (e.stale === true) stale = true;
    if (e.status !== undefined) oneHot(out, F.state, labels, 'state', INDEX_STATES, indexStateLabel(e.status) || 'unknown');
    if (e.progress !== undefined) out.add(F.progress, labels, Math.min(Math.max(e.progress, 0), 100) / 100);
    const scanned = parseLastScanTime(e.lastScanTime);
    if (scanned !== undefined) out.add(F.lastScan, labels, scanned);
    else if (e.lastScanTime !== undefined && e.lastScanTime !== 'NA') skip('last_scan_time_unreadable', `${labels.bucket}/${labels.index}`);
    if (e.partitionMap !== undefined) {
      for (const node of Object.keys(e.partitionMap).sort(byCodeUnit)) out.add(F.partitions, { ...labels, node }, e.partitionMap[node]?.length);
    } else if (e.partitioned !== true) {
      for (const node of e.hosts ?? []) out.add(F.partitions, { ...labels, node }, 1);
    }
  }
  out.add(F.stale, {}, stale);
  return warnings;
}

/**
 * GET /indexStatus on the cluster manager (ns_server's `menelaus_web_indexes:handle_index_status`): the state of
 * every GSI index instance the user may list, as the Index service's `getIndexStatus` reports it and ns_server
 * caches it. Field names are ns_server's (service_index.erl `status_mapping`), not the indexer's.
 */
import { z } from 'zod';
import { checkedArray, checkedRecord, uncheckedArray } from './unchecked.js';

export const INDEX_STATUS_ROUTE = '/indexStatus';

/** One index instance (a replica of an index; partitions of a partitioned instance are consolidated into it). */
export const indexStatusEntrySchema = z.looseObject({
  /** The N1QL name of the index. */
  indexName: z.string().min(1),
  bucket: z.string().min(1),
  /** 7.0+; absent before collections. */
  scope: z.string().optional(),
  collection: z.string().optional(),
  /** The display name, decorated with the replica (e.g. `idx (replica 1)`). */
  index: z.string().optional(),
  /** 7.0+: the replica this instance is (0-based). */
  replicaId: z.number().int().min(0).optional(),
  numReplica: z.number().optional(),
  status: z.string().optional(),
  /** Build completion, an integer percent. */
  progress: z.number().optional(),
  /** The indexer's last scan (Go `time.UnixDate` in the indexer's zone) or `NA`. */
  lastScanTime: z.string().optional(),
  stale: z.boolean().optional(),
  /** Nodes holding the instance (the cluster manager's host:port), consolidated over partitions. */
  hosts: checkedArray(z.string()).optional(),
  partitioned: z.boolean().optional(),
  numPartition: z.number().optional(),
  /** Enterprise: node → partition ids on it (partition 0 for a non-partitioned index). */
  partitionMap: checkedRecord(checkedArray(z.number())).optional(),
  storageMode: z.string().optional(),
  id: z.number().optional(),
  instId: z.number().optional(),
});
export type IndexStatusEntry = z.output<typeof indexStatusEntrySchema>;

/** The answer; `indexes` entries are parsed one by one by the collector so one odd entry costs only itself. */
export const indexStatusSchema = z.looseObject({
  indexes: uncheckedArray(),
  version: z.number().optional(),
  warnings: checkedArray(z.string()).optional(),
});
export type IndexStatusAnswer = z.output<typeof indexStatusSchema>;

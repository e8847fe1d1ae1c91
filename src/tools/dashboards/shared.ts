/**
 * What several cbwatch dashboards share beyond the builders of ../grafana.ts: the selector fragments every
 * query filters with, the texts shown in place of "No data" by panels of a feature switched off, and the
 * free-disk ratio with its thresholds (the Overview and the Nodes dashboards).
 */
import type { ThresholdStep } from '../grafana.js';

/** Selector fragments, so every query filters the same way. */
export const CL = 'couchbase_cluster=~"$couchbase_cluster"';
export const CLB = `${CL}, bucket=~"$bucket"`;
export const XR = `${CL}, source_bucket=~"$bucket"`;
/** The XDCR dashboard also selects the remote cluster and target bucket (one replication), and the node. */
export const XRR = `${XR}, target_cluster_name=~"$remote_cluster", target_bucket=~"$target_bucket"`;
export const XRN = `${XRR}, node=~"$node"`;
export const CLN = `${CL}, node=~"$node"`;
export const REPL = 'couchbase_cluster, source_bucket, target_cluster_name, target_bucket';
export const DAY = 86400;
/** Shown instead of "No data" by panels of a feature that is switched off. */
export const OFF = 'off';
export const PER_NODE_OFF = 'off (bucket_stats per_node: false)';

/**
 * Free share of the disks holding the data (storageTotals hdd), per cluster. Coloured at the defaults of
 * CouchbaseDiskSpaceLow (20%) and CouchbaseDiskSpaceCritical (10%) in alerts/parameters.yml (a test compares them).
 */
export const HDD = `${CL}, storage="hdd"`;
export const RAM = `${CL}, storage="ram"`;
export const DISK_FREE_RATIO = `couchbase_cluster_storage_free_bytes{${HDD}} / couchbase_cluster_storage_total_bytes{${HDD}}`;
export const DISK_FREE_STEPS: readonly ThresholdStep[] = [
  { color: 'red', value: null },
  { color: 'orange', value: 0.1 },
  { color: 'green', value: 0.2 },
];

/** The registry of collectors. Each collector's name is its file name, config key and `collector` label. */
import type { CollectorName } from '../config/schema.js';
import { autofailoverCollector } from './autofailover.js';
import { backupCollector } from './backup.js';
import { bucketStatsCollector } from './bucket_stats.js';
import { bucketsCollector } from './buckets.js';
import { certificatesCollector } from './certificates.js';
import { collectionsCollector } from './collections.js';
import { analyticsCollector } from './analytics.js';
import { eventingCollector } from './eventing.js';
import { indexCollector } from './index-service.js';
import { nodesCollector } from './nodes.js';
import { processesCollector } from './processes.js';
import { queryCollector } from './query.js';
import { searchIndexCollector } from './search-index.js';
import { searchCollector } from './search.js';
import { securityCollector } from './security.js';
import { tasksCollector } from './tasks.js';
import type { Collector } from './types.js';
import { xdcrCollector } from './xdcr.js';

// One import per collector file; keep this list in the DESIGN.md order.

export const COLLECTORS: { readonly [K in CollectorName]?: Collector<K> } = {
  buckets: bucketsCollector,
  bucket_stats: bucketStatsCollector,
  xdcr: xdcrCollector,
  nodes: nodesCollector,
  tasks: tasksCollector,
  autofailover: autofailoverCollector,
  certificates: certificatesCollector,
  security: securityCollector,
  collections: collectionsCollector,
  search: searchCollector,
  backup: backupCollector,
  index: indexCollector,
  search_index: searchIndexCollector,
  eventing: eventingCollector,
  query: queryCollector,
  analytics: analyticsCollector,
  processes: processesCollector,
};

export function collectorList(): Collector[] {
  return Object.values(COLLECTORS) as Collector[];
}

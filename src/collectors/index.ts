/** The registry of collectors. Each collector's name is its file name, config key and `collector` label. */
import type { CollectorName } from '../config/schema.js';
import { bucketStatsCollector } from './bucket_stats.js';
import { bucketsCollector } from './buckets.js';
import { certificatesCollector } from './certificates.js';
import { searchCollector } from './search.js';
import { securityCollector } from './security.js';
import type { Collector } from './types.js';

// One import per collector file; keep this list in the DESIGN.md order.

export const COLLECTORS: { readonly [K in CollectorName]?: Collector<K> } = {
  buckets: bucketsCollector,
  bucket_stats: bucketStatsCollector,
  certificates: certificatesCollector,
  security: securityCollector,
  search: searchCollector,
};

export function collectorList(): Collector[] {
  return Object.values(COLLECTORS) as Collector[];
}

export function getCollector<N extends CollectorName>(name: N): Collector<N> | undefined {
  return COLLECTORS[name] as Collector<N> | undefined;
}

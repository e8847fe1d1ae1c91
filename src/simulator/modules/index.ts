/** Every area module of the simulator, registered in this order. */
import type { SimModule } from '../types.js';
import { autofailoverModule } from './autofailover.js';
import { backupModule } from './backup.js';
import { bucketsModule } from './buckets.js';
import { certificatesModule } from './certificates.js';
import { clusterModule } from './cluster.js';
import { collectionsModule } from './collections.js';
import { eventingModule } from './eventing.js';
import { indexStatusModule } from './index-status.js';
import { rebalanceModule } from './rebalance.js';
import { searchModule } from './search.js';
import { securityModule } from './security.js';
import { serviceStatsModule } from './service-stats.js';
import { statsRangeModule } from './stats-range.js';
import { tasksModule } from './tasks.js';
import { xdcrModule } from './xdcr.js';

export const MODULES: readonly SimModule[] = [clusterModule, tasksModule, bucketsModule, certificatesModule, securityModule, searchModule, rebalanceModule, autofailoverModule, collectionsModule, backupModule, xdcrModule, statsRangeModule, indexStatusModule, eventingModule, serviceStatsModule];

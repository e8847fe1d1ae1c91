/** Every area module of the simulator, registered in this order. */
import type { SimModule } from '../types.js';
import { clusterModule } from './cluster.js';
import { searchModule } from './search.js';
import { tasksModule } from './tasks.js';

export const MODULES: readonly SimModule[] = [clusterModule, tasksModule, searchModule];

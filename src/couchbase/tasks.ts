/**
 * GET /pools/default/tasks, shared by the `tasks` and `xdcr` collectors: one fetch per cluster serves both
 * when their polls meet (the shared cache keeps a result for 5 s and merges concurrent calls).
 */
import { z } from 'zod';
import type { ClusterSource } from './source.js';

/** One entry of the tasks list; every field optional because each task type carries its own set. */
export const taskSchema = z.looseObject({
  type: z.string(),
  status: z.string().optional(),
  // A string for XDCR and rebalance entries; a (64-bit, so imprecise) number for 7.1+ `global_indexes` entries.
  id: z.union([z.string(), z.number().transform((n) => String(n))]).optional(),
  statusId: z.string().optional(),
  subtype: z.string().optional(),
  bucket: z.string().optional(),
  progress: z.number().optional(),
  perNode: z.record(z.string(), z.looseObject({ progress: z.number().optional() })).optional(),
  detailedProgress: z.unknown().optional(),
  errorMessage: z.string().optional(),
  statusIsStale: z.boolean().optional(),
  lastReportURI: z.string().optional(),
  // XDCR entries
  source: z.string().optional(),
  target: z.string().optional(),
  continuous: z.boolean().optional(),
  pauseRequested: z.boolean().optional(),
  errors: z.array(z.unknown()).optional(),
  changesLeft: z.number().optional(),
  docsChecked: z.number().optional(),
  docsWritten: z.number().optional(),
  replicationType: z.string().optional(),
  filterExpression: z.string().optional(),
});

export const tasksSchema = z.array(taskSchema);
export type Task = z.output<typeof taskSchema>;

export const TASKS_ROUTE = '/pools/default/tasks';

export function fetchTasks(src: ClusterSource): Promise<Task[]> {
  return src.shared.get('tasks', 5_000, () => src.client.getJson(TASKS_ROUTE, {}, tasksSchema));
}

/**
 * GET /pools/default/tasks, shared by the `tasks` and `xdcr` collectors: one fetch per cluster serves both
 * when their polls meet (the shared cache keeps a result for 5 s and merges concurrent calls).
 */
import { z } from 'zod';
import { checkedArray, checkedRecord, uncheckedArray, uncheckedRecord } from './unchecked.js';
import { parseEach } from './source.js';
import type { ClusterSource, InvalidEntry } from './source.js';

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
  perNode: checkedRecord(z.looseObject({ progress: z.number().optional() })).optional(),
  detailedProgress: z.unknown().optional(),
  errorMessage: z.string().optional(),
  statusIsStale: z.boolean().optional(),
  lastReportURI: z.string().optional(),
  // XDCR entries
  source: z.string().optional(),
  target: z.string().optional(),
  continuous: z.boolean().optional(),
  pauseRequested: z.boolean().optional(),
  errors: uncheckedArray().optional(),
  changesLeft: z.number().optional(),
  docsChecked: z.number().optional(),
  docsWritten: z.number().optional(),
  replicationType: z.string().optional(),
  filterExpression: z.string().optional(),
});

/** The strict form (every entry must parse): for tests and the simulator's conformance check. */
export const tasksSchema = checkedArray(taskSchema);
export type Task = z.output<typeof taskSchema>;

export const TASKS_ROUTE = '/pools/default/tasks';

/** The list as fetched: entries are checked one by one, so one odd entry does not cost every task. */
const taskListSchema = uncheckedArray();

export interface TaskList {
  readonly tasks: Task[];
  /** Entries that did not parse; `name` is the entry's `type`. */
  readonly invalid: readonly InvalidEntry[];
  /** How many entries did not parse in all (`invalid` holds the first few). */
  readonly invalidCount: number;
}

export function parseTaskList(raw: readonly unknown[]): TaskList {
  const { ok, invalid, invalidCount } = parseEach(raw, taskSchema, 'type');
  return { tasks: ok, invalid, invalidCount };
}

/** The tasks list with its unparseable entries, fetched at most once per 5 s per cluster. */
export function fetchTaskList(src: ClusterSource): Promise<TaskList> {
  return src.shared.get('tasks', 5_000, async () => parseTaskList(await src.client.getJson(TASKS_ROUTE, {}, taskListSchema)));
}

/** The entries of the tasks list that parse (see `fetchTaskList` for the others). */
export async function fetchTasks(src: ClusterSource): Promise<Task[]> {
  return (await fetchTaskList(src)).tasks;
}

/**
 * The Backup service REST API (at `backup_url`, port 8097/18097): repository lists per state and the task
 * history of an active repository. Read-only: the archive operation is an administrator's action and is
 * deliberately absent from this module.
 */
import { z } from 'zod';
import { checkedArray, checkedRecord, uncheckedArray, uncheckedRecord } from './unchecked.js';

export const REPOSITORY_STATES = ['active', 'archived', 'imported'] as const;
export type RepositoryState = (typeof REPOSITORY_STATES)[number];

export const repositorySchema = z.looseObject({
  id: z.string().min(1),
  plan_name: z.string().optional(),
  /** `active`, `paused`, `archived`, `imported`. */
  state: z.string().optional(),
  bucket: z.looseObject({ name: z.string().optional(), uuid: z.string().optional() }).optional(),
  repo: z.string().optional(),
  version: z.number().optional(),
  health: z.looseObject({ healthy: z.boolean().optional(), health_issue: z.string().optional() }).optional(),
  scheduled: checkedRecord(z.looseObject({ name: z.string().optional(), task_type: z.string().optional(), next_run: z.string().optional() })).optional(),
  creation_time: z.string().optional(),
  update_time: z.string().optional(),
});
export type Repository = z.output<typeof repositorySchema>;

/** The list answer; entries are parsed one by one by the collector so one odd repository is skipped alone. */
export const repositoryListSchema = uncheckedArray();

export const taskHistorySchema = checkedArray(
  z.looseObject({
    task_name: z.string().optional(),
    /** `done`, `failed`, `running`, … */
    status: z.string().optional(),
    type: z.string().optional(),
    start: z.string().optional(),
    end: z.string().optional(),
    error_code: z.number().optional(),
  }),
);
export type TaskHistory = z.output<typeof taskHistorySchema>;

export const REPOSITORIES_ROUTE = '/api/v1/cluster/self/repository/{state}';
export const TASK_HISTORY_ROUTE = '/api/v1/cluster/self/repository/active/{repository}/taskHistory';

/**
 * The Search service's active-query endpoints (at `{search_url}`, port 8094/18094): loose response schemas
 * and the route templates (the `endpoint` label of the request counter).
 *
 * `queryMap` values are parsed one by one by the collector (`activeQuerySchema`), so that one odd entry is
 * skipped instead of failing the whole poll.
 */
import { z } from 'zod';
import { uncheckedArray, uncheckedRecord } from './unchecked.js';

export const SEARCH_QUERIES_ROUTE = '/api/query';
export const SEARCH_INDEX_QUERIES_ROUTE = '/api/query/index/{index}';
export const SEARCH_CANCEL_ROUTE = '/api/query/{queryID}/cancel';

export const activeQueriesSchema = z.looseObject({
  status: z.string().optional(),
  /** 7.1+: how many nodes answered the fan-out. */
  stats: z.looseObject({ total: z.number().optional(), successful: z.number().optional() }).optional(),
  totalActiveQueryCount: z.number().optional(),
  filteredActiveQueries: z
    .looseObject({
      indexName: z.string().optional(),
      longerThan: z.string().optional(),
      queryCount: z.number().optional(),
      queryMap: uncheckedRecord().nullish(),
    })
    .optional(),
});
export type ActiveQueries = z.output<typeof activeQueriesSchema>;

export const activeQuerySchema = z.looseObject({
  QueryContext: z
    .looseObject({
      index: z.string().optional(),
      /** The query itself: user input, never a label and never logged unless `log_query_text`. */
      query: z.unknown().optional(),
      size: z.number().optional(),
      from: z.number().optional(),
      /** ms */
      timeout: z.number().optional(),
    })
    .optional(),
  /** Go duration string, e.g. `9.700851426s`. */
  executionTime: z.string().optional(),
});
export type ActiveQuery = z.output<typeof activeQuerySchema>;

export const cancelResponseSchema = z.looseObject({
  status: z.string().optional(),
  msg: z.string().optional(),
});
export type CancelResponse = z.output<typeof cancelResponseSchema>;

/**
 * Split a `queryMap` key: `<nodeUUID>-<queryID>` since 7.1, a bare `<queryID>` in 7.0 (the node is then
 * unknown). The id is the part after the last `-`.
 */
export function splitQueryKey(key: string): { node: string | undefined; id: string } {
  const i = key.lastIndexOf('-');
  if (i < 0) return { node: undefined, id: key };
  const node = key.slice(0, i);
  return { node: node === '' ? undefined : node, id: key.slice(i + 1) };
}

/**
 * GET /pools/default/buckets/{bucket}/scopes: the collections manifest of a bucket. 6.6+ answer
 * `{uid, scopes: [{name, uid, collections: [{name, uid, maxTTL?, history?}]}]}` with uids as hex strings; the
 * 6.5 developer preview answered a map `{scope: {collection: {}}}`, which the mapper also understands.
 */
import { z } from 'zod';
import { checkedArray } from './unchecked.js';

export const scopesSchema = z.looseObject({
  uid: z.string().optional(),
  scopes: checkedArray(
    z.looseObject({
      name: z.string(),
      uid: z.string().optional(),
      collections: checkedArray(z.looseObject({ name: z.string(), uid: z.string().optional() })).default([]),
    }),
  ).optional(),
});
export type ScopesManifest = z.output<typeof scopesSchema>;

export const SCOPES_ROUTE = '/pools/default/buckets/{bucket}/scopes';

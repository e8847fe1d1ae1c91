/**
 * The configuration file's schema (YAML), validated once with strict objects: an unknown key is an error
 * that names its path. Durations are written `30s`, `5m`; sizes `64MiB`. Secrets come only from files or
 * environment variables, never from the file itself.
 */
import { z } from 'zod';
import { DEFAULT_FAST_XDCR_STATS, DEFAULT_XDCR_SLOW_STATS_INTERVAL, XDCR_STAT_NAMES } from '../couchbase/xdcr.js';
import { cronExpressionProblem, timeZoneProblem } from '../cron.js';
import { CLUSTER_SETTINGS, MAX_BYTES_SETTING } from './settings.js';
import type { ClusterSetting } from './settings.js';
import { formatDuration, parseDuration, parseSize } from './units.js';

export { MAX_BYTES_SETTING } from './settings.js';

/**
 * The longest duration a setting may have: 24 days. Durations become timers (setInterval for the probe,
 * AbortSignal.timeout for a poll's deadline), and Node runs a timer of more than 2^31-1 ms (24.8 days) after
 * 1 ms instead, and refuses an AbortSignal.timeout of more than 2^32-1 ms.
 */
export const MAX_DURATION_MS = 24 * 86_400_000;

/** A duration string (or a number of seconds) as milliseconds, from `min` to MAX_DURATION_MS. */
export const duration = (min = 0) =>
  z.union([z.string(), z.number()], { error: 'expected a duration such as 30s or 5m (or a number of seconds)' }).transform((v, ctx) => {
    const ms = typeof v === 'number' ? Math.round(v * 1000) : parseDuration(v);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: `invalid duration ${JSON.stringify(v)} (use e.g. 30s, 5m, 1h)` });
      return z.NEVER;
    }
    if (ms < min) {
      ctx.addIssue({ code: 'custom', message: `duration ${JSON.stringify(v)} is below the minimum of ${formatDuration(min)}` });
      return z.NEVER;
    }
    if (ms > MAX_DURATION_MS) {
      ctx.addIssue({ code: 'custom', message: `duration ${JSON.stringify(v)} is above the maximum of ${formatDuration(MAX_DURATION_MS)}` });
      return z.NEVER;
    }
    return ms;
  });

export const size = () =>
  z.union([z.string(), z.number().int().positive()], { error: 'expected a size such as 64MiB (or a number of bytes)' }).transform((v, ctx) => {
    const n = typeof v === 'number' ? v : parseSize(v);
    if (n === undefined || n <= 0) {
      ctx.addIssue({ code: 'custom', message: `invalid size ${JSON.stringify(v)} (use e.g. 1048576, 64MiB)` });
      return z.NEVER;
    }
    if (!Number.isSafeInteger(n) || n > MAX_BYTES_SETTING) {
      ctx.addIssue({ code: 'custom', message: `size ${JSON.stringify(v)} is above the maximum of 64GiB` });
      return z.NEVER;
    }
    return n;
  });

function urlParts(u: string): URL | undefined {
  try {
    return new URL(u);
  } catch {
    return undefined;
  }
}

/**
 * An http(s) base URL. Credentials in it are refused (they would end up in logs and error messages), and so
 * are a query or fragment, which a base URL cannot keep once paths are appended.
 */
export const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  // An unparsable URL already failed above; these checks only speak about parsable ones.
  .refine((u) => urlParts(u) === undefined || (urlParts(u)?.username === '' && urlParts(u)?.password === ''), {
    message: 'credentials do not belong in the URL (use username and password_file or password_env)',
  })
  .refine((u) => urlParts(u) === undefined || (urlParts(u)?.search === '' && urlParts(u)?.hash === ''), {
    message: 'must not have a query string or fragment',
  });

/** Values of a cluster's `stats_source`. */
export const STATS_SOURCES = ['auto', 'range', 'envelope'] as const;
export type StatsSourceSetting = (typeof STATS_SOURCES)[number];

/** What a cluster name (the `couchbase_cluster` label value) may hold. */
export const CLUSTER_NAME = /^[\w.\-:]+$/;
/**
 * Longest cluster name, characters (a DNS name's 253 fit). The name is in every series, every log line and every
 * error of its cluster, so a huge one multiplies the daemon's memory.
 */
export const MAX_CLUSTER_NAME_LENGTH = 255;

/** A cron expression of five fields (src/cron.ts), as written. */
const cronExpression = z.string({ error: 'expected a cron expression such as "0 3 * * *"' }).superRefine((v, ctx) => {
  const problem = cronExpressionProblem(v);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** An IANA time zone name, checked against the zones this Node knows. */
const timeZone = z.string({ error: 'expected an IANA time zone name such as Europe/Paris' }).superRefine((v, ctx) => {
  const problem = timeZoneProblem(v);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** Options every collector has. */
const base = {
  enabled: z.boolean().default(true),
  interval: duration(1000).optional(),
  /**
   * Poll at the wall-clock minutes of a cron expression (in `timezone`, else the process's local zone) instead of
   * every `interval`; one poll at start too.
   */
  schedule: cronExpression.optional(),
  timezone: timeZone.optional(),
  /** Deadline of one poll; default: the interval. */
  timeout: duration(100).optional(),
};

/**
 * A collector's options: `interval` or `schedule`, and `timezone` only with a schedule. `intervalOnly` names why a
 * collector refuses a schedule.
 */
function collector<S extends z.core.$ZodLooseShape>(shape: S, intervalOnly?: string) {
  return z.strictObject(shape).superRefine((o, ctx) => {
    const v = o as { interval?: unknown; schedule?: unknown; timezone?: unknown };
    if (intervalOnly !== undefined && v.schedule !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['schedule'], message: `takes an interval, not a schedule: ${intervalOnly}` });
      return;
    }
    if (v.interval !== undefined && v.schedule !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['schedule'], message: 'set interval or schedule, not both (a schedule polls at its cron slots; an interval every so long)' });
    }
    if (v.timezone !== undefined && v.schedule === undefined) {
      ctx.addIssue({ code: 'custom', path: ['timezone'], message: 'a time zone only applies to a schedule' });
    }
  });
}

/** Why bucket_stats and xdcr take no schedule. */
const ONLY_INTERVAL = "its rates are the mean of Couchbase's samples since the previous poll, and the sampling it asks for follows its interval";

export const collectorSchemas = {
  buckets: collector({ ...base }),
  bucket_stats: collector({
    ...base,
    per_node: z.boolean().default(false),
    /** Top N hot keys per bucket; 0 turns the family off (default). */
    hot_keys: z.number().int().min(0).max(100).default(0),
  }, ONLY_INTERVAL),
  xdcr: collector({
    ...base,
    /**
     * Period of the slow tier: the stats not in fast_stats are polled once per this period (rounded up to a
     * whole number of intervals, spread over the polls in between). At or below the interval: every stat every poll.
     */
    slow_stats_interval: duration(1000).default(DEFAULT_XDCR_SLOW_STATS_INTERVAL),
    /** Couchbase stat names polled every interval (the fast tier). */
    fast_stats: z
      .array(z.enum(XDCR_STAT_NAMES))
      .superRefine((a, ctx) => {
        const twice = a.find((x, i) => a.indexOf(x) !== i);
        if (twice !== undefined) ctx.addIssue({ code: 'custom', message: `lists "${twice}" twice` });
      })
      .default([...DEFAULT_FAST_XDCR_STATS]),
  }, ONLY_INTERVAL),
  nodes: collector({ ...base }),
  tasks: collector({ ...base }),
  autofailover: collector({ ...base }),
  certificates: collector({ ...base }),
  security: collector({ ...base }),
  collections: collector({ ...base }),
  search: collector({
    ...base,
    slow_query_threshold: duration().default(10_000),
    /** Extra per-index views (GET /api/query/index/{name}). */
    indexes: z.array(z.string().min(1)).default([]),
    cancel: z
      .strictObject({
        enabled: z.boolean().default(false),
        longer_than: duration(1000).default(300_000),
        indexes: z.array(z.string().min(1)).default([]),
        dry_run: z.boolean().default(true),
        log_query_text: z.boolean().default(false),
        /**
         * Cron windows (src/cron.ts): the policy acts only in a minute that `active` matches, and never in one
         * that `inactive` matches; in `timezone`, else the process's local zone.
         */
        active: cronExpression.optional(),
        inactive: cronExpression.optional(),
        timezone: timeZone.optional(),
      })
      .superRefine((c, ctx) => {
        if (c.timezone !== undefined && c.active === undefined && c.inactive === undefined) {
          ctx.addIssue({ code: 'custom', path: ['timezone'], message: 'a time zone only applies to an active or inactive window' });
        }
      })
      .default({ enabled: false, longer_than: 300_000, indexes: [], dry_run: true, log_query_text: false }),
  }),
  backup: collector({ ...base }),
  index: collector({ ...base }),
  search_index: collector({ ...base }),
  eventing: collector({ ...base }),
  query: collector({ ...base }),
  analytics: collector({ ...base }),
  processes: collector({ ...base }),
} as const;

export type CollectorName = keyof typeof collectorSchemas;
export const COLLECTOR_NAMES = Object.keys(collectorSchemas) as CollectorName[];
export type CollectorOptions<N extends CollectorName = CollectorName> = z.output<(typeof collectorSchemas)[N]>;

const collectorsSchema = z
  .strictObject(
    Object.fromEntries(COLLECTOR_NAMES.map((n) => [n, collectorSchemas[n].optional()])) as {
      [K in CollectorName]: z.ZodOptional<(typeof collectorSchemas)[K]>;
    },
  )
  .default({});

const tlsSchema = z
  .strictObject({
    ca_file: z.string().min(1).optional(),
    cert_file: z.string().min(1).optional(),
    key_file: z.string().min(1).optional(),
    insecure_skip_verify: z.boolean().default(false),
  })
  .refine((t) => (t.cert_file === undefined) === (t.key_file === undefined), {
    message: 'cert_file and key_file go together (a client certificate needs its key)',
  });

/** A cluster key's validation, from its row of the settings table. */
function integerSetting(s: ClusterSetting) {
  return z.number().int().min(s.min ?? 0).max(s.max ?? Number.MAX_SAFE_INTEGER).default(s.default);
}

function durationSetting(s: ClusterSetting) {
  return duration(s.min).default(s.default);
}

export const clusterSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(MAX_CLUSTER_NAME_LENGTH, `may be at most ${MAX_CLUSTER_NAME_LENGTH} characters long`)
      .regex(CLUSTER_NAME, 'may hold letters, digits, _ . - : only')
      .optional(),
    url: httpUrl,
    username: z.string().min(1).optional(),
    password_file: z.string().min(1).optional(),
    password_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').optional(),
    tls: tlsSchema.optional(),
    search_url: httpUrl.optional(),
    backup_url: httpUrl.optional(),
    /**
     * Where the credentials may go when Search and Backup are found from nodeServices: `nodes`, any node the
     * cluster lists; `configured`, only the hosts of url, search_url and backup_url.
     */
    credentials_hosts: z.enum(['nodes', 'configured'], { error: 'expected nodes or configured' }).default('nodes'),
    /** Requests in flight to this cluster at once, over all collectors. */
    concurrency: integerSetting(CLUSTER_SETTINGS.concurrency),
    connect_timeout: durationSetting(CLUSTER_SETTINGS.connect_timeout),
    /** Time to the response headers, and again between body chunks. */
    request_timeout: durationSetting(CLUSTER_SETTINGS.request_timeout),
    max_response_bytes: size().default(CLUSTER_SETTINGS.max_response_bytes.default),
    /** How often `couchbase_up` is probed (a small authenticated GET of its own). */
    probe_interval: durationSetting(CLUSTER_SETTINGS.probe_interval),
    /**
     * Families a collector may create from upstream names (bucket stats outside the catalog, cluster counters)
     * per poll; beyond it such stats are left out and counted (cbwatch_collector_capped_total).
     */
    max_dynamic_families: integerSetting(CLUSTER_SETTINGS.max_dynamic_families),
    /** Longest label value, UTF-8 bytes; a longer one is shortened to its prefix, `~` and a hash, and counted. */
    max_label_value_length: integerSetting(CLUSTER_SETTINGS.max_label_value_length),
    /**
     * Where bucket and XDCR statistics come from: `auto` (the range API on a 7.0+ cluster, the sample envelopes
     * before), `range` (always the range API: a cluster without it is a failure) or `envelope` (always the envelopes).
     */
    stats_source: z.enum(STATS_SOURCES).default('auto'),
    collectors: collectorsSchema,
  })
  .refine((c) => !(c.password_file && c.password_env), {
    message: 'set password_file or password_env, not both',
    path: ['password_file'],
  });

export const webhookSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    token_file: z.string().min(1).optional(),
    token_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').optional(),
    databases: z.array(z.string().regex(/^[a-z0-9][a-z0-9_$()+\-/]*$/, 'not a Sync Gateway database name')).default([]),
    max_body_bytes: size().default(1024 * 1024),
    /** Top-level document field whose value is counted per document type (e.g. `type`). */
    type_field: z.string().min(1).optional(),
    max_types: z.number().int().min(1).max(1000).default(50),
    /** Requests handled at once; beyond it, 503 and Sync Gateway drops the event. */
    max_concurrency: z.number().int().min(1).max(10_000).default(64),
  })
  .refine((w) => !w.enabled || w.token_file !== undefined || w.token_env !== undefined, {
    message: 'an enabled webhook receiver needs token_file or token_env',
    path: ['enabled'],
  })
  .refine((w) => !(w.token_file !== undefined && w.token_env !== undefined), {
    message: 'set token_file or token_env, not both',
    path: ['token_file'],
  });

export const fileSchema = z.strictObject({
  clusters: z.array(clusterSchema).default([]),
  webhooks: z.strictObject({ sync_gateway: webhookSchema.optional() }).default({}),
});

export type FileConfig = z.output<typeof fileSchema>;
export type ClusterFileConfig = z.output<typeof clusterSchema>;
export type WebhookConfig = z.output<typeof webhookSchema>;

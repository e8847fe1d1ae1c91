/** The loaded configuration's types, as loadConfig() returns them. */
import type { CollectorName, CollectorOptions, StatsSourceSetting, WebhookConfig } from './schema.js';
import type { WebSettings } from './webconfig.js';

export type ResolvedCollectorOptions<N extends CollectorName = CollectorName> = CollectorOptions<N> & {
  /** Poll interval, ms (with a `schedule`, the default interval: only the default deadline is derived from it). */
  interval: number;
  /** Deadline of one poll, ms. */
  timeout: number;
};

export type ResolvedCollectors = { [K in CollectorName]: ResolvedCollectorOptions<K> };

/** One cluster after defaults, environment and flags have been applied and secrets read. */
export interface ClusterConfig {
  readonly name: string;
  /** Management base URL, no trailing slash, no credentials. */
  readonly url: string;
  readonly username: string | undefined;
  /** Read from a file or the environment; never logged. */
  readonly password: string | undefined;
  /** Where the password came from (`file /run/secrets/cb`, `environment variable CB_PW`), for summaries. */
  readonly passwordSource?: string | undefined;
  /** The file the password was read from, if it was: the client reads it again on a 401 (a rotated secret). */
  readonly passwordFile?: string | undefined;
  readonly tls: {
    readonly caFile?: string;
    readonly certFile?: string;
    readonly keyFile?: string;
    readonly insecureSkipVerify: boolean;
  };
  readonly searchUrl: string | undefined;
  readonly backupUrl: string | undefined;
  /**
   * credentials_hosts: `nodes` (default), Search and Backup found from nodeServices on any node; `configured`,
   * only on the hosts of url, search_url and backup_url (the credentials go nowhere else).
   */
  readonly credentialsHosts?: 'nodes' | 'configured' | undefined;
  readonly concurrency: number;
  readonly connectTimeout: number;
  readonly requestTimeout: number;
  readonly maxResponseBytes: number;
  /** Period of the reachability probe behind `couchbase_up`, ms. */
  readonly probeInterval?: number;
  /** Families a collector may create from upstream names per poll (max_dynamic_families). */
  readonly maxDynamicFamilies?: number | undefined;
  /** Longest label value in UTF-8 bytes (max_label_value_length). */
  readonly maxLabelValueLength?: number | undefined;
  /** `stats_source`: where bucket and XDCR statistics come from; default `auto`. */
  readonly statsSource?: StatsSourceSetting | undefined;
  readonly collectors: ResolvedCollectors;
}

export interface SyncGatewayWebhookConfig extends Omit<WebhookConfig, 'token_file' | 'token_env'> {
  /** The shared secret carried in the handler URL; never logged. */
  readonly token: string;
  /** The file the token was read from, if it was: read again on a wrong token (a rotated secret). */
  readonly tokenFile?: string | undefined;
}

export interface WebConfig {
  readonly listenHost: string;
  readonly listenPort: number;
  readonly configFile: string | undefined;
  /** The loaded `--web.config.file` (TLS key material inside: never log this object). */
  readonly settings?: WebSettings | undefined;
  /** HTTP requests served at once (0: no limit). */
  readonly maxRequests?: number | undefined;
  /** Path of the metrics endpoint (`--web.telemetry-path`). */
  readonly telemetryPath?: string | undefined;
}

export interface Config {
  /** The configuration file read, if any. */
  readonly file?: string | undefined;
  readonly clusters: readonly ClusterConfig[];
  /** `--shard I/N` or CBWATCH_SHARD: `clusters` holds only this shard's clusters (possibly none). */
  readonly shard?: { readonly index: number; readonly total: number } | undefined;
  readonly webhooks: { readonly syncGateway: SyncGatewayWebhookConfig | undefined };
  readonly web: WebConfig;
  /** Process-wide budget for buffered Couchbase answers, bytes. */
  readonly maxBufferedBytes?: number | undefined;
  /** JSON values one Couchbase answer may hold (`--couchbase.max-answer-values`). */
  readonly maxAnswerValues?: number | undefined;
  /** `--collection.gc-every`: collect the collection thread's heap every this many bytes of answers; 0: off; absent: the table's default. */
  readonly gcEveryAnswerBytes?: number | undefined;
  /** `--collection.inline`: the collection runs on the HTTP thread (one isolate) rather than in a worker thread. */
  readonly collectionInline?: boolean | undefined;
  /** `--debug.heap-snapshot-dir`: where SIGUSR2 writes the two threads' heap snapshots; absent: off. */
  readonly heapSnapshotDir?: string | undefined;
  readonly log: { readonly level: string; readonly format: 'json' | 'logfmt' | 'pretty' };
}

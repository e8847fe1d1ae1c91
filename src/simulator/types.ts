/**
 * The simulator's contract. The core (src/simulator/index.ts) owns the fastify app, basic auth, latency,
 * fault injection, the clock and the cluster model (nodes, buckets). Each API area is a module
 * (`SimModule`) that registers its routes and keeps its own state through `ctx.area()`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

export type NodeStatus = 'healthy' | 'unhealthy' | 'warmup';
export type Membership = 'active' | 'inactiveAdded' | 'inactiveFailed';

export interface SimNode {
  /** `host:8091`, as Couchbase names nodes in stats and lists. */
  hostname: string;
  /** Node uuid (also used by the Search service in query keys). */
  uuid: string;
  status: NodeStatus;
  membership: Membership;
  /** Couchbase service names: kv, n1ql, index, fts, cbas, eventing, backup. */
  services: string[];
  serverGroup: string;
  version: string;
  /** True for the node the simulator answers as (its URL is the simulator's). */
  thisNode: boolean;
  /**
   * Host stats of this node's own machine (`@system` names: mem_total, cpu_utilization_rate, …), fixed, in place
   * of the model's curve for the stats it names: a machine unlike the others (../profiles.ts withNonDataNode).
   */
  host?: Readonly<Record<string, number>>;
}

export interface SimBucket {
  name: string;
  uuid: string;
  bucketType: 'membase' | 'memcached' | 'ephemeral';
  ramQuotaBytes: number;
  replicaNumber: number;
  flushEnabled: boolean;
  /** Seed for the bucket's deterministic stat curves. */
  seed: number;
}

/** Every fault kind the simulator can inject (a runtime list, so harnesses can cover them all). */
export const FAULT_KINDS = [
  'status', // answer `status` with a short JSON error body
  'forbidden', // 403 with a Couchbase `permissions` body
  'reset', // destroy the socket without answering
  'hang', // never answer (until the client gives up)
  'invalid_json', // 200 with a body that is not JSON
  'truncated', // 200 with the real body cut in half
  'oversize', // 200 with a huge body (size set by `bytes`, element by `fill`)
  'slow_body', // 200 with the real body sent at `bytesPerSecond` (headers at once)
  'partial_errors', // stats range API: query `query` of the batch answers in `errors` (node `node`, or every node)
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRule {
  /** A route template as registered (e.g. `/pools/default/buckets/:bucket/stats`) or a RegExp on the raw URL path. */
  match: string | RegExp;
  kind: FaultKind;
  status?: number;
  permissions?: string[];
  bytes?: number;
  /** oversize: the JSON element repeated to fill `bytes` (default `0`; `[]` is far slower to parse). */
  fill?: string;
  /** slow_body: bytes per second (default 64). */
  bytesPerSecond?: number;
  /** partial_errors: the index of the failing query in a POST batch (default 0; a GET is query 0). */
  query?: number;
  /** partial_errors: the node (host:port) that fails that query; default every node it asks. */
  node?: string;
  /** partial_errors: the error text (default `Request timed out`, as Couchbase reports a node that did not answer). */
  error?: string;
  /** How many requests this rule has answered (counted by the simulator). */
  hits?: number;
  /** Apply this many times, then stop; default: until cleared. */
  times?: number;
}

export interface SimUsers {
  admin: { username: string; password: string };
  /** A low-privilege user: gets 403 on security endpoints and the limited trustedCAs view. */
  limited: { username: string; password: string };
}

export interface SimOptions {
  /**
   * Couchbase Server version the simulated cluster runs (../profiles.ts): `6.6.5` (no range API, no native
   * /metrics), `7.2.4`, `7.6.5` (the default) or `8.0.0`; another `X.Y.Z` gets the behaviour of its major.
   */
  version?: string;
  /** Scenario name: `default`, `demo`, `bench`, or one added by an area module. */
  scenario?: string;
  buckets?: number;
  nodes?: number;
  /** Added to every response, ms. */
  latencyMs?: number;
  /** Number of XDCR replications (xdcr module). */
  replications?: number;
  /** `fixture`: the stat names of the real captured envelope; `full`: also every name of the reference. */
  statSet?: 'fixture' | 'full';
  users?: Partial<SimUsers>;
  /** Seconds of simulated time per real second (scenarios that move: backlog growth, failovers). */
  speed?: number;
  /** Extra per-area knobs (e.g. `{ caExpiresInDays: 3 }`); each module documents its own. */
  knobs?: Record<string, unknown>;
  seed?: number;
  /** The simulated wall clock (epoch ms) instead of real time scaled by `speed`: tests that step time by hand. */
  clock?: () => number;
}

/** What a Couchbase version answers, as the simulator serves it (built by ../profiles.ts). */
export interface SimProfile {
  /** `X.Y.Z` */
  readonly version: string;
  /** `X.Y.Z-build-enterprise`, as /pools `implementationVersion` and each node's `version` say it. */
  readonly fullVersion: string;
  /** /pools/default `clusterCompatibility`: major * 65536 + minor. */
  readonly clusterCompatibility: number;
  /** 7.0+: GET/POST /pools/default/stats/range and each node's native /metrics. */
  readonly rangeApi: boolean;
  /** 7.2.1+: GET /prometheus_sd_config. */
  readonly prometheusSd: boolean;
  /** The native metric names of this major (8.0 dropped a few 7.x names). */
  readonly major: number;
  /** The server line whose native name table the nodes serve. */
  readonly line: 'pre-7.0' | '7.0' | '7.1' | '7.2' | '7.6' | '8.0';
  /** ep_cache_miss_rate's parts in the envelope (menelaus_stats computed_stats_lazy_proplist, by version). */
  readonly cacheMiss: 'ep_bg_fetched/cmd_get' | 'ep_bg_fetched/cmd_lookup' | 'get_misses/cmd_get';
  /** 7.2+: couch_docs_data_size reports a node's file size while its file is under 128 KiB × its vBuckets. */
  readonly minFileSizeRule: boolean;
}

export interface SimContext {
  readonly options: Required<Omit<SimOptions, 'users' | 'knobs' | 'seed' | 'clock' | 'version'>> & {
    /** The cluster's version profile. */
    profile: SimProfile;
    users: SimUsers;
    knobs: Record<string, unknown>;
    seed: number;
  };
  /** Simulated wall clock, epoch ms (real time scaled by `speed` since start). */
  now(): number;
  readonly startedAt: number;
  readonly nodes: SimNode[];
  readonly buckets: SimBucket[];
  /** The simulator's own base URL once listening (http://127.0.0.1:PORT); '' before. */
  baseUrl(): string;
  /** The port it listens on (0 before listen). */
  port(): number;
  /** Per-area state, created on first use. */
  area<T>(key: string, init: () => T): T;
  /** Who is calling: `admin`, `limited`, or undefined (no or bad credentials). */
  userOf(req: FastifyRequest): 'admin' | 'limited' | undefined;
  /** Deterministic pseudo-random number in [0,1) from a string key. */
  rand(key: string): number;
  readonly faults: FaultController;
}

export interface FaultController {
  add(rule: FaultRule): void;
  clear(): void;
  readonly rules: readonly FaultRule[];
}

export type SimModule = (app: FastifyInstance, ctx: SimContext) => void;

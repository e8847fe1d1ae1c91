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

export interface SimContext {
  readonly options: Required<Omit<SimOptions, 'users' | 'knobs' | 'seed' | 'clock'>> & {
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

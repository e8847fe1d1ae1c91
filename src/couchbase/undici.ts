/**
 * The two parts of undici the Couchbase client uses: `Pool` (with `dispatch` and `close`, which need nothing
 * else) and the error classes. undici's index loads the whole package with them — fetch, WebSocket,
 * EventSource, the mock agents, caches, interceptors, proxy agents and the web streams and WebAssembly
 * HTTP parser fetch needs — modules that cost the collection worker resident memory at rest and are never used
 * (bench/RESULTS.md). The package has no `exports` map, so its
 * files can be required directly; they are the modules the index itself returns (same require cache).
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

export const Pool = require('undici/lib/dispatcher/pool.js') as typeof Undici.Pool;
export type Pool = Undici.Pool;
export const errors = require('undici/lib/core/errors.js') as typeof Undici.errors;

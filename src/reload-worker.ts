/**
 * The worker thread a configuration reload runs in (src/lifecycle.ts, readConfigOffThread): it reads, parses
 * and validates the configuration as `run` loaded it, posts back the result or the loader's message, and ends.
 * The thread that serves /metrics never parses the file: a large or hostile one costs this thread, which lives
 * only as long as the reload.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import type { ParsedArgs } from './config/flags.js';
import { loadConfig } from './config/load.js';
import type { Config } from './config/types.js';

/** What the reload asks: the command line's flags and the environment the process started with. */
export interface ReadRequest {
  readonly flags: ParsedArgs['flags'];
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The answer: the configuration (structured-cloned: its Buffers arrive as Uint8Arrays), or why it was refused. */
export type ReadReply = ({ readonly ok: true; readonly config: Config } | { readonly ok: false; readonly error: string }) & {
  /** The thread that parsed the file. */
  readonly threadId: number;
};

if (parentPort !== null) {
  const { flags, env } = workerData as ReadRequest;
  let reply: ReadReply;
  try {
    reply = { ok: true, config: loadConfig(flags, { ...env }), threadId };
  } catch (e) {
    reply = { ok: false, error: e instanceof Error ? e.message : String(e), threadId };
  }
  try {
    parentPort.postMessage(reply);
  } catch (e) {
    // A value the structured clone cannot carry: a fault of cbwatch's, reported as a failed reload.
    parentPort.postMessage({ ok: false, error: `the configuration could not be handed over: ${e instanceof Error ? e.message : String(e)}`, threadId } satisfies ReadReply);
  }
}

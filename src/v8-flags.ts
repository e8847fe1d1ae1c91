/**
 * The V8 flag that limits the memory reducer to one full collection after a burst of allocation, for the
 * Node running. After each poll, V8's memory reducer shrank the collection thread's heap with up to three full
 * collections in a row, the later ones freeing nothing; one keeps the memory it gives back for less CPU
 * (bench/RESULTS.md, "V8's memory reducer and the range source's CPU").
 *
 * The flag changed name between V8 versions, and node refuses to start on a flag its V8 does not know, so it is
 * not on the launcher's command line: Node 20 (V8 11.3) knows `--memory-reducer-single-gc`, Node 24 (V8 13.6)
 * `--memory-reducer-gc-count=N` instead. Other versions get neither (V8 would print "unrecognized flag"). The
 * memory reducer reads it whenever it schedules a collection, so setting it once at start, before the collection
 * worker's isolate exists, covers both threads.
 */
import { setFlagsFromString } from 'node:v8';

/** The flag for a Node major version, or undefined where neither name is known to exist. Pure. */
export function memoryReducerFlag(nodeMajor: number): string | undefined {
  if (nodeMajor === 20) return '--memory-reducer-single-gc';
  if (nodeMajor >= 24) return '--memory-reducer-gc-count=1';
  return undefined;
}

let applied = false;

/** Set the flag for this Node, once per process. Returns what was set. */
export function limitMemoryReducer(): string | undefined {
  const flag = memoryReducerFlag(Number(process.versions.node.split('.')[0]));
  if (flag !== undefined && !applied) {
    setFlagsFromString(flag);
    applied = true;
  }
  return flag;
}

/**
 * The semi-space size, MB, of the isolates made after start: the collection worker (and the short-lived reload and
 * webhook-body workers). The launcher gives the HTTP thread 1 MB semi-spaces (`--max-semi-space-size=1`): it
 * allocates little, and mostly what a scrape needs. The worker makes nearly all of cbwatch's garbage, and smaller
 * semi-spaces there cost CPU in scavenges (bench/RESULTS.md, "Young generations after the allocation cuts"). A V8
 * flag wins over a worker's `resourceLimits`, and V8 reads it when an isolate is made, so changing it here, before
 * the worker exists, gives the worker its own size while the HTTP thread keeps the command line's.
 */
export const WORKER_SEMI_SPACE_MB = 3;

let workerSemiSpaceSet = false;

/** Set the semi-space size of isolates made from now on, once per process. Returns the flag set. */
export function setWorkerSemiSpace(): string {
  const flag = `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`;
  if (!workerSemiSpaceSet) {
    setFlagsFromString(flag);
    workerSemiSpaceSet = true;
  }
  return flag;
}

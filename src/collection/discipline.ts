/**
 * What the thread that polls sets up before its first request, wherever the collection runs (the collection
 * worker, or the daemon's own thread): the process-wide answer budget and value limit, and the collections of
 * the heap that follow the answers read (BurstCollector: one every `gcEveryAnswerBytes` of answers, one when a
 * burst of polls is over). Module state is per thread, so it is set in the thread that reads the answers.
 */
import { DEFAULT_MAX_ANSWER_VALUES, DEFAULT_MAX_BUFFERED_BYTES } from '../config/defaults.js';
import { setAnswerBudget, setAnswerListener, setAnswerValueLimit } from '../couchbase/client.js';
import type { Log } from '../log-core.js';
import { BurstCollector, GC_EVERY_DEFAULT_BYTES, IDLE_COLLECT_AFTER_BYTES } from './release.js';

export interface AnswerLimits {
  readonly maxBufferedBytes?: number | undefined;
  readonly maxAnswerValues?: number | undefined;
  readonly gcEveryAnswerBytes?: number | undefined;
}

/** Sets the budget, the value limit and the answer listener; returns the collector whose idle() ends a burst. */
export function setUpAnswers(limits: AnswerLimits, log: Log): BurstCollector {
  setAnswerBudget(limits.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES);
  setAnswerValueLimit(limits.maxAnswerValues ?? DEFAULT_MAX_ANSWER_VALUES);
  // Both collections need V8's gc exposed (the launcher's --expose-gc); without it collectSoon does nothing, and an
  // option set by hand says so rather than being quietly ignored.
  if ((limits.gcEveryAnswerBytes ?? 0) > 0 && typeof (globalThis as { gc?: unknown }).gc !== 'function') {
    log.warn('--collection.gc-every has no effect: node was started without --expose-gc (bin/cbwatch.js passes it)');
  }
  const burst = new BurstCollector(IDLE_COLLECT_AFTER_BYTES, undefined, limits.gcEveryAnswerBytes ?? GC_EVERY_DEFAULT_BYTES);
  setAnswerListener((bytes) => burst.count(bytes));
  return burst;
}

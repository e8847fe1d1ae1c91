/**
 * The event-loop delay monitor samples every EVENT_LOOP_SAMPLE_MS (100 ms, not prom-client's 10 or the 20 used
 * before: every sample wakes the HTTP thread). A stall of the thread must still show in the lag summaries: the
 * sample due during it fires as late as the stall lets it. The bound below is a floor on a stall the test makes
 * itself (a busy loop of 400 ms), so a slow machine only makes the reading larger.
 */
import { describe, expect, it } from 'vitest';
import { EVENT_LOOP_SAMPLE_MS, processRegistry, startProcessMetrics } from '../../src/metrics/process.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('process metrics: event-loop lag', () => {
  it('samples every 100 ms and still shows a 400 ms stall of the thread in nodejs_eventloop_lag_max_seconds', async () => {
    expect(EVENT_LOOP_SAMPLE_MS).toBe(100);
    startProcessMetrics();
    // A first reading resets the monitor's histogram (prom-client does after each collection).
    await processRegistry.metrics();
    await sleep(3 * EVENT_LOOP_SAMPLE_MS);
    const end = Date.now() + 400;
    while (Date.now() < end) {
      // the stall
    }
    await sleep(3 * EVENT_LOOP_SAMPLE_MS);
    const text = await processRegistry.metrics();
    const max = Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1]);
    // The sample due 100 ms into the stall fires when it ends: at least 0.3 s late, less the timer's own slack.
    expect(max).toBeGreaterThanOrEqual(0.25);
    expect(/^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(text)?.[1]).toBeDefined();
  });
});

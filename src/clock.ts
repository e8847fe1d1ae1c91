/**
 * Milliseconds on the process's monotonic clock (CLOCK_MONOTONIC through libuv's hrtime): what schedules,
 * deadlines and ages are measured on, never the wall clock, which NTP steps and restored VMs move by seconds or
 * hours. The same clock in every thread of the process, unlike performance.now(), whose origin is per thread:
 * statuses made in the collection worker are compared with it on the HTTP thread (src/collection/view.ts).
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}

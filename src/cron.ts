/**
 * Cron expressions, read by node-cron (the design card's package) and used for matching only: which wall-clock
 * minutes an expression names, in which time zone, and the next of them. node-cron's own timers are never
 * started. They compute their slots from the wall clock and would fire whenever it says (a clock stepped
 * back would stop every poll for as long); cbwatch's scheduler keeps its one monotonic ticker, and on each
 * tick compares the wall clock with the slot node-cron named (src/scheduler/index.ts); the search
 * collector's cancel window asks whether the current minute matches. Where an operator thinks
 * in wall-clock time (a backup collector at 03:00, a cancel policy active in business hours), the wall clock is
 * what the schedule is about; polling intervals stay on the monotonic clock.
 *
 * Expressions have exactly five fields (minute hour day-of-month month day-of-week): a minute is the finest slot.
 * node-cron also takes a sixth field for seconds; cbwatch refuses it, so that a window (`activeAt`) has one
 * meaning, "this minute matches", and a schedule cannot ask for a poll every second. Note that node-cron
 * requires both day fields to match when both are restricted (`0 3 1 * 1` is 03:00 on a Monday that is the 1st),
 * where Vixie cron takes either.
 */
import { createRequire } from 'node:module';
import type * as NodeCron from 'node-cron';
import type { ScheduledTask } from 'node-cron';

let cronModule: typeof NodeCron | undefined;
/**
 * node-cron, loaded on the first schedule or window configured: most configurations have none, and each package
 * costs resident memory in every thread that loads it (test/collection/imports.test.ts). Required at run time by
 * name, it stays outside the bundles (scripts/bundle.mjs) and is loaded from node_modules, a production dependency
 * like yaml. Its `require` entry is CommonJS, so a synchronous require returns what an import would.
 */
function cron(): typeof NodeCron {
  return (cronModule ??= createRequire(import.meta.url)('node-cron') as typeof NodeCron);
}

/** Why `expression` is not a cron expression cbwatch takes, or undefined when it is. */
export function cronExpressionProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (expression.trim() === '' || fields.length !== 5) {
    return `expected 5 fields (minute hour day-of-month month day-of-week), got ${expression.trim() === '' ? 0 : fields.length}: ${JSON.stringify(expression)}`;
  }
  const v = cron().validateDetailed(expression);
  if (v.valid) return undefined;
  const first = v.errors[0];
  return `invalid cron expression ${JSON.stringify(expression)}${first === undefined ? '' : `: ${first.message.replace(/ is a invalid expression for /, ' is not valid for the ')}`}`;
}

/** Why `zone` is not an IANA time zone name this Node knows, or undefined when it is. */
export function timeZoneProblem(zone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return undefined;
  } catch {
    return `unknown time zone ${JSON.stringify(zone)} (use an IANA name such as UTC, Europe/Paris, America/New_York)`;
  }
}

/** The minute that holds `epochMs` (its start), where cron matching happens. */
export function minuteOf(epochMs: number): number {
  return Math.floor(epochMs / 60_000) * 60_000;
}

/**
 * A validated expression in its time zone (absent: the process's local zone, TZ). Holds one node-cron task that is
 * never started; `dispose()` removes it from node-cron's registry.
 */
export class CronSpec {
  private readonly task: ScheduledTask;

  constructor(
    readonly expression: string,
    readonly timezone: string | undefined,
  ) {
    const problem = cronExpressionProblem(expression) ?? (timezone === undefined ? undefined : timeZoneProblem(timezone));
    if (problem !== undefined) throw new RangeError(problem);
    this.task = cron().createTask(expression, () => undefined, timezone === undefined ? {} : { timezone });
  }

  /**
   * Whether the minute holding `epochMs` matches: a window defined by a cron expression is active for the whole
   * of every minute the expression names (`* 9-17 * * 1-5`: 09:00:00 to 17:59:59 on weekdays).
   */
  activeAt(epochMs: number): boolean {
    return this.task.match(new Date(minuteOf(epochMs)));
  }

  /**
   * The first slot strictly after the system's wall clock now, epoch ms. node-cron walks from `new Date()` and
   * takes no other start, so callers (the scheduler) compare it with `Date.now()` too.
   */
  nextSlot(): number {
    const [next] = this.task.getNextRuns(1);
    if (next === undefined) throw new RangeError(`cron expression ${JSON.stringify(this.expression)} names no future minute`);
    return next.getTime();
  }

  /** The expression and its zone as written in the configuration's summaries. */
  describe(): string {
    return `"${this.expression}" (${this.timezone ?? `local time${process.env['TZ'] === undefined ? '' : `, TZ=${process.env['TZ']}`}`})`;
  }

  dispose(): void {
    void this.task.destroy();
  }
}

/** A slot as the operator reads it: ISO 8601 in the schedule's zone, with its offset. */
export function formatSlot(epochMs: number, timezone: string | undefined): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    ...(timezone === undefined ? {} : { timeZone: timezone }),
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).formatToParts(new Date(epochMs));
  const get = (t: string): string => parts.find((p) => p.type === t)?.value ?? '';
  const offset = get('timeZoneName').replace(/^GMT$/, 'GMT+00:00').replace(/^GMT/, '');
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')} ${offset}`;
}

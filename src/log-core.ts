/**
 * What every thread's logger shares, without pino: the shape collectors, the scheduler and the collection engine
 * log through (pino's Logger fits it; so does the collection worker's own logger, src/collection/worker-log.ts),
 * the paths whose values are redacted, and a logger that writes nothing. The collection worker loads this
 * module and not pino (each package costs resident memory in every thread that loads it).
 */

export const REDACT_PATHS = [
  'password',
  '*.password',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'bindPass',
  '*.bindPass',
  'privateKeyPassphrase',
  '*.privateKeyPassphrase',
];

/** What replaces a redacted value. */
export const REDACT_CENSOR = '[redacted]';

/** pino's level numbers, by name. */
export const LEVEL_VALUES: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** One level's log method: an object (or an Error) and a message, or a message alone. */
export interface LogFn {
  (obj: object, msg?: string): void;
  (msg: string): void;
}

/** The logger worker-side code uses: pino's Logger is one, the collection worker's WorkerLogger another. */
export interface Log {
  readonly level: string;
  child(bindings: Record<string, unknown>): Log;
  isLevelEnabled(level: string): boolean;
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
}

const nothing = (): void => undefined;

/** A logger that writes nothing (a poll run without one: tests, `cbwatch check` internals). */
export const SILENT_LOG: Log = {
  level: 'silent',
  child: () => SILENT_LOG,
  isLevelEnabled: () => false,
  trace: nothing,
  debug: nothing,
  info: nothing,
  warn: nothing,
  error: nothing,
  fatal: nothing,
};

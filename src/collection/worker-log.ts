/**
 * The collection worker's logger: writes the same JSON lines the daemon's pino logger writes (src/log.ts:
 * level by name, ISO time, pid, the child bindings, the object's keys, msg; pino's `err` serializer; the same
 * redacted paths), so the worker need not load pino. The lines go to the HTTP thread, which
 * writes them where the daemon's logger writes. test/collection/worker-log.test.ts checks it line for line
 * against pino.
 */
import { LEVEL_VALUES, REDACT_CENSOR, REDACT_PATHS } from '../log-core.js';
import type { Log, LogFn } from '../log-core.js';

const LEVEL_NAMES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

const PATHS = REDACT_PATHS.map((p) => p.split('.'));
/** Keys whose whole value is replaced. */
const TOP = new Set(PATHS.filter((p) => p.length === 1).map((p) => p[0] as string));
/** Paths below a key, by that key (`*`: any key). */
const NESTED = PATHS.filter((p) => p.length > 1);

type Rec = Record<string, unknown>;
const isObject = (v: unknown): v is Rec => typeof v === 'object' && v !== null;
const isErrorLike = (v: unknown): v is Rec & { message: string } => isObject(v) && typeof v.message === 'string';

function cause(err: Rec): Rec | undefined {
  const c = typeof err.cause === 'function' ? (err.cause as () => unknown)() : err.cause;
  return isErrorLike(c) ? c : undefined;
}

function stackWithCauses(err: Rec, seen = new Set<Rec>()): string {
  const stack = typeof err.stack === 'string' ? err.stack : '';
  if (seen.has(err)) return `${stack}\ncauses have become circular...`;
  const c = cause(err);
  if (c === undefined) return stack;
  seen.add(err);
  return `${stack}\ncaused by: ${stackWithCauses(c, seen)}`;
}

function messageWithCauses(err: Rec, seen = new Set<Rec>(), skip = false): string {
  const message = skip ? '' : (err.message as string) || '';
  if (seen.has(err)) return `${message}: ...`;
  const c = cause(err);
  if (c === undefined) return message;
  seen.add(err);
  const verror = typeof err.cause === 'function';
  return message + (verror ? '' : ': ') + messageWithCauses(c, seen, verror);
}

/** pino-std-serializers' `err`: type, message and stack with their causes, then the error's enumerable keys. */
function serializeErr(err: unknown, seen = new Set<unknown>()): unknown {
  if (!isErrorLike(err)) return err;
  seen.add(err);
  const ctor = err.constructor;
  const out: Rec = {
    type: typeof ctor === 'function' ? ctor.name : err.name,
    message: messageWithCauses(err),
    stack: stackWithCauses(err),
  };
  if (Array.isArray(err.errors)) out.aggregateErrors = err.errors.map((e) => serializeErr(e, seen));
  for (const key in err) {
    if (out[key] !== undefined) continue;
    const val = err[key];
    if (isErrorLike(val)) {
      if (key !== 'cause' && !seen.has(val)) out[key] = serializeErr(val, seen);
    } else out[key] = val;
  }
  seen.delete(err);
  return out;
}

/** A copy of `value` (the value of top-level key `key`) with the redacted paths below it censored. */
function redactBelow(key: string, value: unknown): unknown {
  if (!isObject(value)) return value;
  let copy: Rec | undefined;
  for (const path of NESTED) {
    if (path[0] !== '*' && path[0] !== key) continue;
    const rest = path.slice(1);
    let parent: Rec = copy ?? value;
    let ok = true;
    for (let i = 0; i < rest.length - 1; i++) {
      const next = parent[rest[i] as string];
      if (!isObject(next)) {
        ok = false;
        break;
      }
      parent = next;
    }
    const last = rest[rest.length - 1] as string;
    // Present, even with the value undefined, is censored (as fast-redact, pino's redactor, does).
    if (!ok || !(last in parent)) continue;
    // Copy along the path only (the caller's object is never changed).
    if (copy === undefined) copy = Array.isArray(value) ? ([...value] as unknown as Rec) : { ...value };
    let at = copy;
    for (let i = 0; i < rest.length - 1; i++) {
      const k = rest[i] as string;
      const inner = at[k] as Rec;
      at[k] = Array.isArray(inner) ? ([...inner] as unknown as Rec) : { ...inner };
      at = at[k] as Rec;
    }
    at[last] = REDACT_CENSOR;
  }
  return copy ?? value;
}

function stringifySafe(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(value, (_k, v: unknown) => {
      if (typeof v === 'bigint') return v.toString();
      if (isObject(v)) {
        if (seen.has(v)) return '[Circular]';
        seen.add(v);
      }
      return v;
    });
  }
}

/** `,"key":value` for each own key of `obj` whose value is not undefined, as pino writes it. */
function properties(obj: Rec): string {
  let out = '';
  for (const key in obj) {
    if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
    let value = obj[key];
    if (value === undefined) continue;
    if (key === 'err') value = serializeErr(value);
    if (TOP.has(key)) value = REDACT_CENSOR;
    else value = redactBelow(key, value);
    if (typeof value === 'function' || value === undefined) continue;
    if (typeof value === 'number' && !Number.isFinite(value)) value = null;
    const text = stringifySafe(value);
    if (text === undefined) continue;
    out += `,${JSON.stringify(key)}:${text}`;
  }
  return out;
}

export class WorkerLogger implements Log {
  private readonly threshold: number;
  readonly trace: LogFn;
  readonly debug: LogFn;
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
  readonly fatal: LogFn;

  /** `write` gets each line, newline included; `bindings` is the text after pid (a child's bindings). */
  constructor(
    readonly level: string,
    private readonly write: (line: string) => void,
    private readonly bindings = `,"pid":${process.pid}`,
  ) {
    this.threshold = LEVEL_VALUES[level] ?? LEVEL_VALUES.info!;
    const method = (name: (typeof LEVEL_NAMES)[number]): LogFn => {
      const value = LEVEL_VALUES[name]!;
      if (value < this.threshold) return () => undefined;
      return ((a: object | string, b?: string) => this.line(name, a, b)) as LogFn;
    };
    this.trace = method('trace');
    this.debug = method('debug');
    this.info = method('info');
    this.warn = method('warn');
    this.error = method('error');
    this.fatal = method('fatal');
  }

  child(bindings: Record<string, unknown>): WorkerLogger {
    const own: Rec = {};
    for (const key in bindings) if (key !== 'level' && key !== 'serializers' && key !== 'formatters' && key !== 'customLevels') own[key] = bindings[key];
    return new WorkerLogger(this.level, this.write, this.bindings + properties(own));
  }

  isLevelEnabled(level: string): boolean {
    const value = LEVEL_VALUES[level];
    return value !== undefined && value >= this.threshold;
  }

  private line(level: string, a: object | string | null | undefined, b: string | undefined): void {
    let obj: Rec;
    let msg: unknown = b;
    if (typeof a === 'string') {
      obj = {};
      msg = a;
    } else if (a === undefined || a === null) obj = {};
    else if (a instanceof Error) {
      obj = { err: a };
      if (msg === undefined) msg = a.message;
    } else {
      obj = a as Rec;
      if (msg === undefined && obj.msg === undefined && isObject(obj.err)) msg = obj.err.message;
    }
    const m = msg === undefined ? '' : `,"msg":${typeof msg === 'string' ? JSON.stringify(msg) : (stringifySafe(msg) ?? 'null')}`;
    this.write(`{"level":"${level}","time":"${new Date().toISOString()}"${this.bindings}${properties(obj)}${m}}\n`);
  }
}

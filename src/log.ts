/**
 * One pino root logger; children per cluster and collector. Secrets are redacted by path as a second line
 * of defence — the first is never putting them in log calls at all.
 */
import { writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from 'pino';
import { LEVEL_VALUES, REDACT_CENSOR, REDACT_PATHS } from './log-core.js';

export { REDACT_PATHS } from './log-core.js';

export type LogFormat = 'json' | 'logfmt' | 'pretty';

/**
 * Why a log line was dropped (`cbwatch_log_lines_dropped_total{reason}`): `closed` (the reader of the pipe or
 * socket is gone: EPIPE, ECONNRESET; or the descriptor is: EBADF), `no_space` (ENOSPC, EDQUOT, EFBIG: a full
 * disk), `would_block` (a pipe whose reader stopped reading stayed full for LOG_BLOCK_BUDGET_MS), `other`.
 */
export const LOG_DROP_REASONS = ['closed', 'no_space', 'would_block', 'other'] as const;
export type LogDropReason = (typeof LOG_DROP_REASONS)[number];

/** How long one line may wait for a full, non-blocking pipe before it is dropped, ms. */
export const LOG_BLOCK_BUDGET_MS = 20;

const dropListeners: Array<(reason: LogDropReason) => void> = [];

/** Call `fn` for every dropped line (src/metrics/self.ts counts them). Never logs: that could loop. */
export function onLogDrop(fn: (reason: LogDropReason) => void): void {
  dropListeners.push(fn);
}

/** Count a line a log destination refused (also used for errors the stdio streams emit, src/cli.ts). */
export function recordLogDrop(err: unknown): void {
  const reason = dropReason(err);
  for (const fn of dropListeners) fn(reason);
}

function dropReason(err: unknown): LogDropReason {
  switch ((err as { code?: unknown } | null)?.code) {
    case 'EPIPE':
    case 'ECONNRESET':
    case 'EBADF':
    case 'ERR_STREAM_DESTROYED':
      return 'closed';
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EFBIG':
      return 'no_space';
    case 'EAGAIN':
      return 'would_block';
    default:
      return 'other';
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * The log destination: synchronous writes to a file descriptor (stderr by default) that never throw and never
 * emit 'error'. A line the destination refuses — the pipe's reader gone (EPIPE: the likely case under Docker or
 * systemd when the log collector restarts), a full disk, a pipe that stays full — is dropped and counted, and the
 * exporter keeps serving (process.stderr would turn the first EPIPE into an uncaught exception, and a full
 * disk into an exit 1 at start). The next line tries again: a disk that has space again, or a reader that
 * came back on a FIFO, gets the lines again.
 *
 * The descriptor may be non-blocking (Node makes a pipe non-blocking once anything touches process.stderr): a
 * full pipe is retried for at most LOG_BLOCK_BUDGET_MS per line, and not at all while the previous line had to be
 * dropped for it, so a stalled reader costs the thread at most that once.
 */
export class FdDestination {
  private congested = false;

  constructor(private readonly fd = 2) {}

  write(s: string): boolean {
    const buf = Buffer.from(s, 'utf8');
    let off = 0;
    let waited = 0;
    while (off < buf.length) {
      try {
        off += writeSync(this.fd, buf, off);
      } catch (err) {
        if ((err as { code?: unknown }).code === 'EAGAIN' && !this.congested && waited < LOG_BLOCK_BUDGET_MS) {
          Atomics.wait(pause, 0, 0, 1);
          waited++;
          continue;
        }
        if ((err as { code?: unknown }).code === 'EAGAIN') this.congested = true;
        recordLogDrop(err);
        return true;
      }
    }
    this.congested = false;
    return true;
  }
}

let stderrDestination: FdDestination | undefined;

/** The process's stderr as a destination that drops and counts instead of failing (one per process). */
export function safeStderr(): FdDestination {
  if (stderrDestination === undefined) {
    stderrDestination = new FdDestination(2);
    // Creating process.stderr puts a pipe on fd 2 in non-blocking mode (libuv; the collection worker's stdio
    // does it anyway): a reader that stops reading then costs a line at most LOG_BLOCK_BUDGET_MS, where a
    // blocking pipe would stop the thread that serves /metrics until the reader comes back. What else writes
    // there (Node's own warnings) has its errors counted, never thrown.
    process.stderr.on('error', recordLogDrop);
  }
  return stderrDestination;
}

function logfmtValue(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return /[\s"=]/.test(s) || s === '' ? JSON.stringify(s) : s;
}

/**
 * A record's fields as logfmt pairs: a nested object becomes dotted keys, never a JSON blob. An error is
 * `err.message` and `err.code`, and `err.stack` (one long line of frames) only when the logger shows debug lines.
 * Arrays stay one value (`settings=["a","b"]`).
 */
export function logfmtPairs(rec: Readonly<Record<string, unknown>>, withStack: boolean, prefix = ''): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(rec)) {
    if (v === undefined) continue;
    const key = `${prefix}${k}`;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      let fields = v as Record<string, unknown>;
      if (key === 'err') {
        // Its message (with its causes', as pino's serializer joins them) and code say what happened; the rest of
        // what the serializer keeps (class name, brief, request) repeats the message.
        const { message, code, stack } = fields;
        fields = { message, code, ...(withStack ? { stack } : {}) };
      }
      out.push(...logfmtPairs(fields, withStack, `${key}.`));
    } else out.push(`${key}=${logfmtValue(v)}`);
  }
  return out;
}

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** Turns pino's JSON lines into logfmt (`ts=… level=… msg=… k=v`) or a terser human form. */
function formatStream(format: 'logfmt' | 'pretty', out: { write(s: string): unknown }, withStack: boolean): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        let rec: Record<string, unknown>;
        try {
          rec = JSON.parse(line) as Record<string, unknown>;
        } catch {
          out.write(`${line}\n`);
          continue;
        }
        const { time, level, msg, pid: _pid, hostname: _h, ...rest } = rec;
        const ts = new Date(typeof time === 'number' ? time : String(time)).toISOString();
        const lvl = typeof level === 'number' ? (LEVELS[level] ?? String(level)) : String(level);
        const kv = logfmtPairs(rest, withStack);
        out.write(
          format === 'logfmt'
            ? `ts=${ts} level=${lvl} msg=${logfmtValue(msg ?? '')}${kv.length ? ` ${kv.join(' ')}` : ''}\n`
            : `${ts.slice(11, 23)} ${lvl.toUpperCase().padEnd(5)} ${String(msg ?? '')}${kv.length ? `  ${kv.join(' ')}` : ''}\n`,
        );
      }
      cb();
    },
  });
}

export function createLogger(opts: { level?: string; format?: LogFormat; destination?: NodeJS.WritableStream | FdDestination } = {}): Logger {
  const dest = opts.destination ?? safeStderr();
  const format = opts.format ?? 'json';
  // Stacks are for debugging: a logfmt or pretty line carries one only at debug level or below.
  const stream = format === 'json' ? dest : formatStream(format, dest, (LEVEL_VALUES[opts.level ?? 'info'] ?? 30) <= (LEVEL_VALUES.debug as number));
  return pino(
    {
      level: opts.level ?? 'info',
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: REDACT_CENSOR },
      // Names and ISO times, as log stacks (Loki, Elasticsearch, journald readers) expect.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    stream as pino.DestinationStream,
  );
}

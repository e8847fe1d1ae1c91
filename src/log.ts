/**
 * One pino root logger; children per cluster and collector. Secrets are redacted by path as a second line
 * of defence — the first is never putting them in log calls at all.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from 'pino';

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

export type LogFormat = 'json' | 'logfmt' | 'pretty';

function logfmtValue(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return /[\s"=]/.test(s) || s === '' ? JSON.stringify(s) : s;
}

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** Turns pino's JSON lines into logfmt (`ts=… level=… msg=… k=v`) or a terser human form. */
function formatStream(format: 'logfmt' | 'pretty', out: NodeJS.WritableStream): Writable {
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
        const kv = Object.entries(rest).map(([k, v]) => `${k}=${logfmtValue(v)}`);
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

export function createLogger(opts: { level?: string; format?: LogFormat; destination?: NodeJS.WritableStream } = {}): Logger {
  const dest = opts.destination ?? process.stderr;
  const format = opts.format ?? 'json';
  const stream = format === 'json' ? dest : formatStream(format, dest);
  return pino(
    {
      level: opts.level ?? 'info',
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // Names and ISO times, as log stacks (Loki, Elasticsearch, journald readers) expect.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    stream as pino.DestinationStream,
  );
}

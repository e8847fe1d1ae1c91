/**
 * The collection worker's logger (src/collection/worker-log.ts) against the oracle it replaces: the daemon's
 * pino logger (createLogger, src/log.ts). The same calls give the same line, the time masked.
 */
import { describe, expect, it } from 'vitest';
import { WorkerLogger } from '../../src/collection/worker-log.js';
import type { Log } from '../../src/log-core.js';
import { createLogger } from '../../src/log.js';
import type { FdDestination } from '../../src/log.js';

function pair(level: string): { pino: Log; ours: Log; lines: () => [string[], string[]] } {
  const a: string[] = [];
  const b: string[] = [];
  const pino = createLogger({ level, format: 'json', destination: { write: (s: string) => a.push(s) } as unknown as FdDestination });
  const ours = new WorkerLogger(level, (s) => b.push(s));
  const mask = (s: string): string => s.replace(/"time":"[^"]*"/, '"time":"T"');
  return { pino, ours, lines: () => [a.map(mask), b.map(mask)] };
}

class CodedError extends Error {
  constructor(
    message: string,
    readonly code: string,
    opts?: ErrorOptions,
  ) {
    super(message, opts);
  }
}

const root = new Error('connect ECONNREFUSED 127.0.0.1:9');
(root as Error & { code?: string }).code = 'ECONNREFUSED';
const wrapped = new CodedError('poll failed', 'CBW_ERR_NETWORK', { cause: root });
const assigned = new Error('outer');
(assigned as Error & { cause?: unknown }).cause = new Error('inner, enumerable');
const vcause = new Error('verror style');
const fromFunction = new Error('from a function');
(vcause as Error & { cause?: unknown }).cause = () => fromFunction;
const aggregate = new AggregateError([root, new TypeError('bad')], 'several');

const RECORDS: Array<[string, (l: Log) => void]> = [
  ['message only', (l) => l.info('collection started')],
  ['object and message', (l) => l.info({ collector: 'xdcr', n: 3, ok: true, ratio: 0.5 }, 'polled')],
  ['object without message', (l) => l.warn({ a: 'x' })],
  ['undefined values and functions are left out', (l) => l.info({ a: undefined, b: 1, f: () => 1, c: null }, 'm')],
  ['non-finite numbers are null', (l) => l.info({ nan: Number.NaN, inf: Infinity, nested: { x: Number.NaN } }, 'm')],
  ['an Error as the object, its message as msg', (l) => l.error(wrapped)],
  ['an Error and a message', (l) => l.error(wrapped, 'collector failed')],
  ['err key: type, message, stack with causes, enumerable props', (l) => l.error({ err: wrapped, cluster: 'c1' }, 'x')],
  ['err key without message: msg is its message', (l) => l.error({ err: root })],
  ['an enumerable cause', (l) => l.warn({ err: assigned }, 'y')],
  ['a VError-style cause', (l) => l.warn({ err: vcause }, 'y')],
  ['err that is not an Error', (l) => l.warn({ err: 'a string' }, 'y')],
  ['aggregate errors', (l) => l.error({ err: aggregate }, 'z')],
  ['top-level secrets', (l) => l.info({ password: 'hunter2', token: { t: 1 }, authorization: 'Basic x', bindPass: 'p', privateKeyPassphrase: 'q', user: 'u' }, 'm')],
  ['nested secrets', (l) => l.info({ cluster: { name: 'c1', password: 'hunter2', token: 't' }, headers: { authorization: 'Basic x', accept: '*/*' } }, 'm')],
  ['req.headers.authorization', (l) => l.info({ req: { headers: { authorization: 'Basic x', host: 'h' }, url: '/' } }, 'm')],
  ['two levels down is not a redacted path', (l) => l.info({ a: { b: { password: 'deep' } } }, 'm')],
  ['an undefined nested secret', (l) => l.info({ a: { password: undefined, x: 1 } }, 'm')],
  ['strings that need escaping', (l) => l.info({ s: 'quote " backslash \\ newline \n tab \t é ✓' }, 'line\nbreak "q"')],
  ['arrays', (l) => l.info({ list: [1, 'a', { password: 'p' }], empty: [] }, 'm')],
  ['child bindings', (l) => l.child({ couchbase_cluster: 'c1', collector: 'bucket_stats' }).info({ n: 1 }, 'polled')],
  ['grandchild, an undefined binding and a redacted binding', (l) => l.child({ a: 1, gone: undefined }).child({ password: 'p', b: { token: 't' } }).warn('m')],
  ['the object may repeat a binding', (l) => l.child({ collector: 'a' }).info({ collector: 'b' }, 'm')],
  ['every level', (l) => {
    l.trace('t');
    l.debug('d');
    l.info('i');
    l.warn('w');
    l.error('e');
    l.fatal('f');
  }],
];

describe('the collection worker logger writes the lines pino writes', () => {
  for (const level of ['info', 'debug', 'trace', 'error']) {
    for (const [name, call] of RECORDS) {
      it(`${name} (level ${level})`, () => {
        const { pino, ours, lines } = pair(level);
        call(pino);
        call(ours);
        const [expected, actual] = lines();
        expect(actual).toEqual(expected);
      });
    }
  }

  it('level filtering and isLevelEnabled agree with pino', () => {
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']) {
      const { pino, ours, lines } = pair(level);
      for (const l of ['trace', 'debug', 'info', 'warn', 'error', 'fatal']) {
        expect(ours.isLevelEnabled(l)).toBe(pino.isLevelEnabled(l));
        expect(ours.child({ x: 1 }).isLevelEnabled(l)).toBe(pino.child({ x: 1 }).isLevelEnabled(l));
      }
      expect(ours.level).toBe(pino.level);
      const [expected, actual] = lines();
      expect(actual).toEqual(expected);
    }
  });

  it('the hand-written line (not only the same as pino)', () => {
    const out: string[] = [];
    new WorkerLogger('info', (s) => out.push(s)).child({ couchbase_cluster: 'c1' }).warn({ password: 'hunter2', n: 2 }, 'hello');
    expect(out).toHaveLength(1);
    const line = out[0] as string;
    expect(line.endsWith('\n')).toBe(true);
    expect(line.replace(/"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/, '"time":"T"')).toBe(
      `{"level":"warn","time":"T","pid":${process.pid},"couchbase_cluster":"c1","password":"[redacted]","n":2,"msg":"hello"}\n`,
    );
    expect(line).not.toContain('hunter2');
  });

  it('a circular object is written, not thrown (pino repeats one level more before its marker)', () => {
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    const out: string[] = [];
    new WorkerLogger('info', (s) => out.push(s)).info({ circular }, 'm');
    expect(JSON.parse(out[0] as string)).toMatchObject({ circular: { a: 1, self: '[Circular]' }, msg: 'm' });
  });

  it('never changes the object it logs', () => {
    const obj = { cluster: { password: 'p' }, err: wrapped };
    new WorkerLogger('info', () => undefined).info(obj, 'm');
    expect(obj.cluster.password).toBe('p');
    expect(obj.err).toBe(wrapped);
  });
});

/**
 * The range source's shape witness: between two polls nothing of the reader and grouping is alive, and V8's full
 * collections dropped their object shapes, with every optimized function whose code embeds one (`--trace-deopt`:
 * "weak objects" on Node 20, "embedded weak objects cleared" on Node 24). Every poll then optimized the reader and
 * grouping again in V8's compiler threads. keepShapes() keeps a grouping that has read one answer alive for the life
 * of the process.
 *
 * Run in a child node (the built modules, as the collection thread runs them) with `--trace-deopt`: many polls so
 * that V8 optimizes the hot methods, then two full collections with no poll alive, then one more poll. Without
 * the witness the reader's and grouping's methods are deoptimized for "weak objects"; with it, none is. The first
 * half is the control: it shows the test can fail on the running V8.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';

const url = (f: string): string => JSON.stringify(pathToFileURL(join(PACKAGE_ROOT, 'dist', 'stats', f)).href);

/** Polls of 40 buckets × 3 ops × 2 nodes of kv_ops, read as the collection thread reads a range answer. */
const SCRIPT = `
const r = await import(${url('range.js')});
const rr = await import(${url('range-reader.js')});
const nm = await import(${url('native-map.js')});
const rg = await import(${url('range-groups.js')});
const cm = await import(${url('counter-memo.js')});
const memo = new cm.CounterMemo();
function answer(t) {
  const data = [];
  for (let b = 0; b < 40; b++) for (const op of ['get', 'set', 'delete']) for (let n = 0; n < 2; n++)
    data.push('{"metric":{"nodes":["n' + n + ':8091"],"name":"kv_ops","bucket":"b' + b + '","op":"' + op + '"},"values":[[' + t + ',"' + (t * 3 + b) + '"],[' + (t + 10) + ',"' + (t * 3 + b + 7.5) + '"]]}');
  return '[{"data":[' + data.join(',') + '],"errors":[],"startTimestamp":' + t + ',"endTimestamp":' + (t + 10) + '}]';
}
async function poll(t) {
  const g = new r.AnswerGrouping(nm.KV_NATIVE_MAP, r.kvItemOf, memo);
  g.commit(await g.readTextSliced(answer(t), ['kv_ops'], new Set()));
  return g.done().items.size;
}
if (process.argv.includes('keep')) r.keepShapes();
let t = 1000;
for (let i = 0; i < 400; i++) await poll((t += 10));
await new Promise((res) => setTimeout(res, 100));
for (let i = 0; i < 50; i++) await poll((t += 10));
globalThis.gc();
globalThis.gc();
console.error('BUCKETS', await poll((t += 10)));
// A class's methods, its base classes' included (the reader's text steps are its JsonCursor's).
const own = (c) => {
  const out = [];
  for (let p = c.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) out.push(...Object.getOwnPropertyNames(p).filter((n) => n !== 'constructor'));
  return out;
};
console.error('READER', JSON.stringify(own(rr.QueryReader)));
console.error('OURS', JSON.stringify([rr.QueryReader, r.AnswerGrouping, rg.Grouping, rg.Layer].flatMap(own)));
`;

/**
 * The methods of the reader and grouping deoptimized for weak objects in the whole run (with the witness there is
 * none at any time), and what the poll after the collections read.
 */
function run(keep: boolean): { deopted: string[]; buckets: number; readerMethods: string[] } {
  // Optimized on the main thread as soon as V8 decides to (not on its compiler threads, whose jobs a busy machine
  // may not finish before the collections): the control then finds the optimized code it expects.
  const args = ['--expose-gc', '--trace-deopt', '--no-concurrent-recompilation', '--input-type=module', '-e', SCRIPT];
  if (keep) args.push('--', 'keep');
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  expect(r.status, r.stderr.slice(0, 2000)).toBe(0);
  // V8 writes its trace to stdout through its own buffer, in its own time; the script's lines go to stderr.
  const ours = JSON.parse(/^OURS (.*)$/m.exec(r.stderr)?.[1] ?? '[]') as string[];
  expect(ours).toEqual(expect.arrayContaining(['ws', 'stageRead', 'commit', 'put']));
  // Node's own functions (URL helpers of the imports) may be deoptimized too: only the classes' methods count.
  const deopted = [...r.stdout.matchAll(/<SharedFunctionInfo ([\w$]+)>\)[^\n]*reason: (?:embedded )?weak objects/g)].map((m) => m[1] as string).filter((n) => ours.includes(n));
  return {
    deopted,
    buckets: Number(/^BUCKETS (\d+)$/m.exec(r.stderr)?.[1]),
    readerMethods: JSON.parse(/^READER (.*)$/m.exec(r.stderr)?.[1] ?? '[]') as string[],
  };
}

describe('keepShapes: the reader and grouping keep their optimized code from poll to poll', () => {
  it('without the witness, a full collection between polls deoptimizes the reader (the control)', () => {
    const r = run(false);
    expect(r.buckets).toBe(40);
    // Among them the reader's whitespace and string scanners, which touch nothing but the reader itself.
    expect(r.deopted.filter((n) => r.readerMethods.includes(n))).toEqual(expect.arrayContaining(['ws', 'stringClose', 'objectNext']));
    expect(r.deopted).toEqual(expect.arrayContaining(['stageRead', 'commit']));
  });

  it('with the witness, none of their methods is deoptimized for weak objects', () => {
    const r = run(true);
    expect(r.buckets).toBe(40);
    expect(r.deopted).toEqual([]);
  });
});

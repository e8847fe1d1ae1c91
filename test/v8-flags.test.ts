/**
 * The memory reducer's limit is set at start, by the name the running V8 knows (src/v8-flags.ts). On a command
 * line a flag node does not know stops every start: `--memory-reducer-single-gc`, passed by the launcher for a
 * while, made Node 24 (the Debian package's and the Docker image's runtime) exit 9 before cbwatch ran.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/paths.js';
import { WORKER_SEMI_SPACE_MB, memoryReducerFlag } from '../src/v8-flags.js';

describe('memoryReducerFlag', () => {
  it('names the flag of each V8: Node 20 single-gc, Node 24 and later a count of 1, others nothing', () => {
    expect(memoryReducerFlag(20)).toBe('--memory-reducer-single-gc');
    expect(memoryReducerFlag(22)).toBeUndefined();
    expect(memoryReducerFlag(24)).toBe('--memory-reducer-gc-count=1');
    expect(memoryReducerFlag(18)).toBeUndefined();
  });

  it('the running node knows the flag it is given: setting it prints nothing and the value reads back', () => {
    const mod = pathToFileURL(join(PACKAGE_ROOT, 'dist', 'v8-flags.js')).href;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(mod)}); process.stdout.write(String(m.limitMemoryReducer()));`], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    // V8 writes "Error: unrecognized flag …" to stderr for a name it does not know.
    expect(r.stderr).toBe('');
    const major = Number(process.versions.node.split('.')[0]);
    expect(r.stdout).toBe(String(memoryReducerFlag(major)));
    // The name is one this V8 lists.
    const flag = memoryReducerFlag(major);
    if (flag !== undefined) {
      const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
      expect(options).toContain(flag.replace(/=.*/, '').replace(/^--/, '--'));
    }
  });

  it("a worker started after setWorkerSemiSpace gets its semi-spaces, while the thread started with 1 MB ones keeps them", () => {
    const mod = pathToFileURL(join(PACKAGE_ROOT, 'dist', 'v8-flags.js')).href;
    // Each thread allocates short-lived objects until its young generation has grown as far as it may, then prints
    // the new space's size (two semi-spaces).
    const fill = "let a=[];for(let i=0;i<3e6;i++){a.push({i});if(a.length>5e4)a=[]}";
    const size = "v8.getHeapSpaceStatistics().find((s)=>s.space_name==='new_space').space_size";
    const run = (set: boolean): { flag: string; main: number; worker: number } => {
      const script = [
        `import v8 from 'node:v8'; import { Worker } from 'node:worker_threads';`,
        `const m = await import(${JSON.stringify(mod)}); const flag = ${set ? 'm.setWorkerSemiSpace()' : "''"};`,
        `${fill}; const main = ${size};`,
        `const w = new Worker(${JSON.stringify(`import v8 from 'node:v8'; import { parentPort } from 'node:worker_threads'; ${fill}; parentPort.postMessage(${size});`)}, { eval: true });`,
        `w.once('message', (worker) => { process.stdout.write(JSON.stringify({ flag, main, worker })); w.terminate(); });`,
      ].join('\n');
      const r = spawnSync(process.execPath, ['--max-semi-space-size=1', '--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      return JSON.parse(r.stdout) as { flag: string; main: number; worker: number };
    };
    const MB = 1024 * 1024;
    const set = run(true);
    expect(set.flag).toBe(`--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`);
    // The HTTP thread's new space: two semi-spaces of at most 1 MB; the worker's, larger.
    expect(set.main).toBeLessThanOrEqual(2 * MB);
    expect(set.worker).toBeGreaterThan(2 * MB);
    // Without the call, the worker is held to the command line's 1 MB semi-spaces as well.
    expect(run(false).worker).toBeLessThanOrEqual(2 * MB);
  });
});

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
import { memoryReducerFlag } from '../src/v8-flags.js';

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
});

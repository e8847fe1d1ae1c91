/**
 * The V8 flags cbwatch runs with are the launcher's (bin/cbwatch.js, through its shebang: `npx cbwatch`, a global
 * install), and the two places that call node themselves pass the same ones: the Docker image's entrypoint,
 * the systemd unit and the Debian package's launcher. bench/RESULTS.md measures the launcher; a deployment that dropped the flag would run with
 * the larger young generation the bench measured against it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';

const read = (...p: string[]): string => readFileSync(join(PACKAGE_ROOT, ...p), 'utf8');

describe('launch flags', () => {
  const shebang = read('bin', 'cbwatch.js').split('\n')[0] ?? '';
  const m = /^#!\/usr\/bin\/env -S ((?:[A-Z_]+=\S+ )*)node((?: --[\w-]+(?:=\S+)?)*)$/.exec(shebang);
  const flags = m?.[2]?.trim().split(' ') ?? [];
  const vars = m?.[1]?.trim().split(' ') ?? [];

  it('the launcher passes --max-semi-space-size=1, --expose-gc and --v8-pool-size=2 through `env -S`', () => {
    expect(flags).toEqual(['--max-semi-space-size=1', '--expose-gc', '--v8-pool-size=2']);
  });

  it("the launcher fixes glibc's mmap threshold at 128 KiB through `env -S`", () => {
    expect(vars).toEqual(['MALLOC_MMAP_THRESHOLD_=131072']);
  });

  it('the Dockerfile, the systemd unit and the Debian launcher set the same malloc variable', () => {
    expect(read('Dockerfile')).toMatch(/^ENV MALLOC_MMAP_THRESHOLD_=131072$/m);
    expect(read('deploy', 'systemd', 'cbwatch.service')).toMatch(/^Environment=MALLOC_MMAP_THRESHOLD_=131072$/m);
    expect(read('packaging', 'deb', 'cbwatch')).toMatch(/^export MALLOC_MMAP_THRESHOLD_=131072$/m);
  });

  it('the launcher, run as its shebang says, hands node the variable', () => {
    const out = execFileSync('/usr/bin/env', ['-S', `${vars.join(' ')} node -e process.stdout.write(String(process.env.MALLOC_MMAP_THRESHOLD_))`], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(out).toBe('131072');
  });

  it("the Dockerfile's entrypoint and the systemd unit pass the launcher's flags, before the script", () => {
    const entry = /^ENTRYPOINT (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(JSON.parse(entry ?? '[]')).toEqual(['node', ...flags, '--disable-sigusr1', '/opt/cbwatch/bin/cbwatch.js']);
    const exec = /^ExecStart=(.*)$/m.exec(read('deploy', 'systemd', 'cbwatch.service'))?.[1] ?? '';
    expect(exec.split(' ').slice(0, 3 + flags.length)).toEqual(['/opt/cbwatch/node/bin/node', ...flags, '--disable-sigusr1', '/opt/cbwatch/bin/cbwatch.js']);
  });

  it("the Debian package's launcher passes them to its own Node", () => {
    const line = /^exec (.*)$/m.exec(read('packaging', 'deb', 'cbwatch'))?.[1] ?? '';
    // Its Node 24 also takes --disable-sigusr1 (Node 22.14 and later): SIGUSR1 does not open the inspector (issue 39).
    expect(line.split(' ').slice(0, 3 + flags.length)).toEqual(['"$lib/node/bin/node"', ...flags, '--disable-sigusr1', '"$lib/bin/cbwatch.js"']);
  });

  it('node accepts the flags (a flag it does not know would stop every start)', () => {
    expect(execFileSync(process.execPath, [...flags, '-e', 'process.stdout.write(process.execArgv.filter((a) => a.startsWith("--")).join())'], { encoding: 'utf8' })).toBe(flags.join(','));
  });
});

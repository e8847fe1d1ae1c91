/**
 * `cbwatch demo` started from an installed copy (a chroot, an OCI image), waited for until its /metrics shows
 * the demo cluster up: the release tests' common start (test/release/minbase.test.ts, image.test.ts, artefacts.test.ts).
 */
import { spawn } from 'node:child_process';

/** The demo cluster up, as /metrics says it. */
export const UP = /^couchbase_up\{couchbase_cluster="demo"\} 1$/m;

export interface DemoRun {
  /**
   * Polls the metrics URL the demo printed (or `at`, the URL to reach it by from here: a port a container runtime
   * published), every 100 ms for at most a minute or until the demo exits: the last body read and its URL ('' when none).
   */
  untilUp(at?: string): Promise<{ text: string; url: string }>;
  /** What the demo wrote so far. */
  output(): { out: string; err: string };
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

export function startDemo(cmd: string, argv: readonly string[], env: NodeJS.ProcessEnv, cwd?: string): DemoRun {
  const child = spawn(cmd, [...argv], { env, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd !== undefined ? { cwd } : {}) });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    async untilUp(at?: string) {
      let text = '';
      let url = '';
      for (let i = 0; i < 600 && !UP.test(text); i++) {
        const printed = /metrics:\s+(http:\/\/\S+\/metrics)/.exec(out)?.[1] ?? '';
        url = at !== undefined && printed !== '' ? at : printed;
        if (url) text = await fetch(url).then((r) => r.text(), () => '');
        if (child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      return { text, url };
    },
    output: () => ({ out, err }),
    stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

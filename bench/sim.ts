/**
 * `node bench/out/bench/sim.js '<json SimOptions>' PORT`: the simulator in a process of its own, with options the
 * `simulate` command has no flag for (knobs read when the simulator is built, such as `analyticsNodes`). Prints
 * `listening <url>` once it listens; stops on SIGTERM or SIGINT.
 */
import { createSimulator } from '../src/simulator/index.js';
import type { SimOptions } from '../src/simulator/index.js';

async function main(): Promise<void> {
  const opts = JSON.parse(process.argv[2] ?? '{}') as SimOptions;
  const sim = createSimulator(opts);
  const url = await sim.listen(Number(process.argv[3] ?? 0), '127.0.0.1');
  process.stdout.write(`listening ${url}\n`);
  const stop = (): void => void sim.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`sim failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

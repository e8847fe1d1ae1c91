/** `node bench/out/bench/quick.js '<json ScenarioOptions>'`: one scenario, its result as JSON (for exploring). */
import { runScenario } from './scenario.js';
import type { ScenarioOptions } from './scenario.js';

const o = JSON.parse(process.argv[2] ?? '{}') as ScenarioOptions;
runScenario(o).then(
  (r) => process.stdout.write(`${JSON.stringify(r, null, 1)}\n`),
  (e: unknown) => {
    process.stderr.write(`${(e as Error).stack}\n`);
    process.exitCode = 1;
  },
);

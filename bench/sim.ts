/**
 * `node bench/out/bench/sim.js '<json SimOptions>' PORT`: the simulator in a process of its own, with options the
 * `simulate` command has no flag for (knobs read when the simulator is built, such as `analyticsNodes`). Prints
 * `listening <url>` once it listens; stops on SIGTERM or SIGINT.
 *
 * Where the simulator does not serve it, this adds the Search service's list of index definitions (`GET /api/index`,
 * docs-server rest-fts-indexing: `{ status, indexDefs: { indexDefs: { <name>: { name, sourceName, type } } } }`),
 * built from the simulator's own Search indexes, so that search_index's choice of `@fts-<bucket>` sections before 7.0
 * is measured as on a real cluster.
 */
import { createSimulator } from '../src/simulator/index.js';
import type { SimOptions } from '../src/simulator/index.js';
import { simSearchIndexes } from '../src/simulator/services.js';

async function main(): Promise<void> {
  const opts = JSON.parse(process.argv[2] ?? '{}') as SimOptions;
  const sim = createSimulator(opts);
  if (!sim.app.hasRoute({ method: 'GET', url: '/api/index' })) {
    sim.app.get('/api/index', async () => ({
      status: 'ok',
      indexDefs: {
        implVersion: '5.5.0',
        uuid: 'bench',
        indexDefs: Object.fromEntries(simSearchIndexes(sim.ctx).map((i) => [i.index, { name: i.index, type: 'fulltext-index', sourceType: 'couchbase', sourceName: i.bucket }])),
      },
    }));
  }
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

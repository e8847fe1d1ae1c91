/**
 * Entry of the collection worker thread: runs the CollectionEngine (clients, scheduler, collectors, store,
 * part renderer) and posts each update's parts to the HTTP thread, transferring their buffers rather than
 * copying them. Log lines go to the HTTP thread too, which writes them where the daemon's logger writes.
 */
import { getPriority, setPriority } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { COLLECTORS } from '../collectors/index.js';
import { registerConfigSecrets } from '../config/secrets.js';
import { registerSecret } from '../redact.js';
import type { Collector } from '../collectors/types.js';
import type { CollectorName } from '../config/schema.js';
import type { ClusterConfig, ResolvedCollectorOptions } from '../config/types.js';
import { CollectionEngine } from './engine.js';
import { PartRenderer } from './parts.js';
import { setUpAnswers } from './discipline.js';
import { WORKER_NICE } from './protocol.js';
import { WorkerLogger } from './worker-log.js';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.js';

const port = parentPort;
if (port === null) throw new Error('src/collection/worker.ts runs only as a worker thread');
const init = workerData as WorkerInit;
// Module state is per thread: the redactor's secrets must be set in this one too (the answer budget below).
registerConfigSecrets({ clusters: init.clusters, webhooks: {}, web: {} });
for (const secret of init.secrets ?? []) registerSecret(secret);
// When both threads want a core, the one serving scrapes goes first: on Linux a thread has its own nice value,
// and this lowers only the collection thread's (pid 0 is the calling thread). A poll runs for seconds and a
// scrape for milliseconds, so the poll loses little. On the bench machine, where the simulator and V8's GC threads
// compete too, the effect on scrape latency during polls was within run-to-run noise (bench/RESULTS.md, "Where
// the resident memory goes"); it matters on a host whose cores the collection thread would otherwise fill.
// Elsewhere it may apply to the whole process, or be refused: then it is not applied.
if (process.platform === 'linux' && init.nice !== 0) {
  try {
    // Relative to the process's own nice value (a service started at nice 10 keeps its collection below that).
    setPriority(0, Math.min(19, getPriority(0) + (init.nice ?? WORKER_NICE)));
  } catch {
    // Not permitted (a seccomp profile, say): collection runs at the process's priority.
  }
}

function send(m: FromWorker, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(m, transfer);
}

// The daemon's JSON lines without pino in this thread (src/collection/worker-log.ts).
const log = new WorkerLogger(init.logLevel, (line) => send({ t: 'log', line }));

const collectors: Collector[] = [];
for (const name of init.collectors) {
  const c = COLLECTORS[name as CollectorName];
  if (c) collectors.push(c as Collector);
}
const extra: Array<{ collector: Collector; options: ResolvedCollectorOptions }> = [];
for (const file of init.extraModules ?? []) {
  const mod = (await import(pathToFileURL(file).href)) as { collector: Collector; options: ResolvedCollectorOptions };
  collectors.push(mod.collector);
  extra.push(mod);
}
const withExtra = (list: readonly ClusterConfig[]): readonly ClusterConfig[] =>
  extra.reduce((cs, mod) => cs.map((c) => ({ ...c, collectors: { ...c.collectors, [mod.collector.name]: mod.options } })), list);
const clusters = withExtra(init.clusters);
// The answers' budget and limits, and the collections of this thread's heap that follow them (discipline.ts).
const burst = setUpAnswers(init, log);

const engine = new CollectionEngine({
  clusters,
  collectors,
  log,
  emit: (update) => {
    send({ t: 'update', update }, PartRenderer.transferList(update));
    // The update of the last poll running: the burst is over and its parts have left this thread.
    if (!engine.scheduler.busy()) burst.idle();
  },
});

port.on('message', (m: ToWorker) => {
  if (m.t === 'pollAll') {
    engine.pollAllOnce().then(
      () => send({ t: 'polled', id: m.id }),
      (err: unknown) => send({ t: 'polled', id: m.id, error: err instanceof Error ? err.message : String(err) }),
    );
  } else if (m.t === 'reconfigure') {
    // The reloaded credentials must be redacted in this thread as well.
    registerConfigSecrets({ clusters: m.clusters, webhooks: {}, web: {} });
    for (const secret of m.secrets ?? []) registerSecret(secret);
    engine.reconfigure(withExtra(m.clusters)).then(
      (r) => {
        log.info(r, 'collection reconfigured');
        send({ t: 'polled', id: m.id });
      },
      (err: unknown) => send({ t: 'polled', id: m.id, error: err instanceof Error ? err.message : String(err) }),
    );
  } else if (m.t === 'stop') {
    void engine
      .stop()
      .catch(() => undefined)
      .then(() => {
        send({ t: 'stopped' });
        port.close();
      });
  }
});

engine.start();

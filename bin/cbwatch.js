#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=1 --expose-gc --v8-pool-size=2
// Thin launcher: the compiled CLI lives in dist/bundle/ (tsc, then scripts/bundle.mjs; `npm ci` builds it through the
// prepare script).
// Two V8 flags and a Node option. --max-semi-space-size=1: semi-spaces of 1 MB for the thread serving HTTP, which
// allocates little (what a scrape needs) and otherwise grows its young generation to V8's 48 MB under scrape load
// (ten gzip connections back to back); with --collection.inline it polls too, in the same heap. The collection
// worker, which makes nearly all the garbage, gets semi-spaces of 3 MB (a young generation
// of 9 MB), set at start before it exists (src/v8-flags.ts, setWorkerSemiSpace): a V8 flag overrides the 8 MB of its own resourceLimits (WORKER_RESOURCE_LIMITS in src/collection/host.ts), and V8 reads
// it when an isolate is made. bench/RESULTS.md ("Young generations after the allocation cuts", and the memory
// section's A/B of the split) has the peak and CPU of each size; a 1 MB semi-space for the worker too costs CPU. --expose-gc: the HTTP thread asks V8 for a full collection (in a task of its own) once replaced exposition
// parts add up to 4 MB (src/collection/release.ts); otherwise V8 frees them only after 64 MB have piled up
// (bench/RESULTS.md, "Where the peak goes"). --optimize-for-size was dropped earlier: it roughly doubled CPU and
// made a large parse ten times slower. A third setting, one memory-reducer collection per burst, is
// made at start instead (src/v8-flags.ts): its flag has another name in each V8, and node refuses to start on one
// it does not know. --v8-pool-size=2: two V8 helper threads (parallel scavenge, concurrent marking and
// compilation) instead of Node's four; each thread that allocates keeps a malloc arena of its own, and with two
// fewer the daemon held less memory at rest (issue 26, item 2); with one helper, bench/RESULTS.md ("Where the
// resident memory goes") found no CPU change beyond the run-to-run spread at the realistic scenario.
// MALLOC_MMAP_THRESHOLD_=131072 (glibc's malloc; other C libraries ignore it): every block of 128 KiB or more is
// mapped on its own and unmapped when freed. Left to itself, glibc raises that threshold to the size of the largest
// block freed so far (up to 32 MiB), and from then on answers' bytes and exposition parts come from its arenas,
// which keep what is freed resident. bench/RESULTS.md ("Footprint, eighth round") has the figures.
// `node bin/cbwatch.js …` runs without the flags and the variable; the Dockerfile, the systemd unit and the Debian
// package's launcher pass them.
//
// SIGHUP's handler comes first (src/hangup.ts, a module without imports): loading the CLI and its dependencies
// takes a few hundred milliseconds, during which a SIGHUP (a reload sent as the service starts) would otherwise
// kill the process with exit 129. The CLI is imported only after it is in place. The same module listens for
// SIGUSR1, so that it does not open the Node inspector on a Node without --disable-sigusr1 (20; issue 39).
// Before this line runs, Node's defaults apply: docs/security.md, "Signals".
import { writeSync } from 'node:fs';
import { installHangupHandler } from '../dist/hangup.js';

installHangupHandler();

function report(err) {
  try {
    writeSync(2, `cbwatch: ${err instanceof Error ? err.message : String(err)}\n`);
  } catch {
    // stderr is gone or full: the exit code is all that is left.
  }
  process.exitCode = 1;
}

// `cbwatch healthcheck` (Docker's HEALTHCHECK, every 30 s) takes a light path, after the SIGHUP handler as every
// command: dist/healthcheck.cjs (src/healthcheck.cts) loads Node's net and, with a web config file, tls and the
// yaml package, never the CLI and the daemon behind it. A command line it does not take (an unknown flag, --help)
// falls through to the CLI, which judges it.
const argv = process.argv.slice(2);
let handled = false;
if (argv[0] === 'healthcheck') {
  try {
    const { default: { lightHealthcheck } } = await import('../dist/healthcheck.cjs');
    const code = await lightHealthcheck(argv.slice(1), process.env, (s) => process.stdout.write(s), (s) => process.stderr.write(s));
    if (code !== undefined) {
      process.exitCode = code;
      handled = true;
    }
  } catch (err) {
    report(err);
    handled = true;
  }
}
if (!handled) {
  const { main } = await import('../dist/bundle/cli.js');
  main(argv).then((code) => {
    if (typeof code === 'number') process.exitCode = code;
  }, report);
}

#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm ci` through the prepare script).
// No V8 flags. Earlier versions passed --max-semi-space-size=2 --optimize-for-size to hold less memory; with
// collection in a worker thread, bench/RESULTS.md ("Node flags") measured them at the realistic scenario:
// --optimize-for-size roughly doubled CPU per minute for about a quarter less resident memory (and made
// parsing a large answer ten times slower), and the semi-space cap alone cost CPU without a clear memory gain.
// Who would rather spend CPU than memory runs `node --max-semi-space-size=2 --optimize-for-size bin/cbwatch.js …`.
// The collection worker gets a smaller young generation of its own (WORKER_RESOURCE_LIMITS in
// src/collection/host.ts; bench/RESULTS.md, "Heap sizes per thread"); a --max-semi-space-size flag here would
// override it for both threads, and the HTTP thread allocates too little to need one.
import { main } from '../dist/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`cbwatch: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);

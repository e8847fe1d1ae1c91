#!/usr/bin/env -S node --max-semi-space-size=2 --optimize-for-size
// Thin launcher: the compiled CLI lives in dist/ (built by `npm ci` through the prepare script).
// Node flags, for resident memory: cbwatch's garbage is short-lived (a poll's JSON, a render), and V8's
// defaults trade memory for speed it does not need here. --max-semi-space-size=2 caps the young generation
// at 2 MB per semi-space (Node 20 grows it to 16 MB); --optimize-for-size makes V8 grow and keep less heap.
// At 100 buckets, peak RSS while polling and scraped: ~150-160 MB with V8's defaults, ~125-130 MB with both
// flags, for ~0.2 s more CPU per poll (more frequent, smaller collections; figures in bench/RESULTS.md).
// `node bin/cbwatch.js …` runs with V8's defaults, for who would rather spend memory than CPU.
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

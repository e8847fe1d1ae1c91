/**
 * `cbwatch healthcheck`: ask the running daemon for /-/healthy (Docker's HEALTHCHECK). bin/cbwatch.js takes a
 * lighter path first (src/healthcheck.cts); a command line that path does not take arrives here once the strict
 * parser has passed it.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ParsedArgs } from '../config/flags.js';
import { PACKAGE_ROOT } from '../paths.js';
import type { Out } from './common.js';

/**
 * src/healthcheck.cts, compiled: a CommonJS file, so that Docker's HEALTHCHECK (dist/healthcheck.cjs) starts
 * without Node's ES module loader. Loaded from dist/ also when this module runs from src/ (the tests), as the
 * collection worker is.
 */
function healthcheckModule(): typeof import('../healthcheck.cjs') {
  return createRequire(import.meta.url)(join(PACKAGE_ROOT, 'dist', 'healthcheck.cjs')) as typeof import('../healthcheck.cjs');
}

export async function commandHealthcheck(args: ParsedArgs, out: Out, err: Out): Promise<number> {
  // What bin/cbwatch.js's light path does (src/healthcheck.cts), once the command line has passed the strict
  // parser: only the web settings locate the daemon; the configuration file is not read.
  const { runHealthcheck } = healthcheckModule();
  return runHealthcheck({ 'web.listen-address': args.flags['web.listen-address'], 'web.config.file': args.flags['web.config.file'] }, process.env, out, err);
}

/**
 * `cbwatch check`: poll every enabled collector once and print a table (src/check.ts); no server. Exit 0 when
 * every collector succeeded, 1 when one failed, 2 for a bad configuration (main's).
 */
import type { ParsedArgs } from '../config/flags.js';
import { DEFAULT_MAX_ANSWER_VALUES, DEFAULT_MAX_BUFFERED_BYTES, loadConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { createLogger } from '../log.js';
import { clearCredentialWarnings } from './common.js';
import type { Out } from './common.js';

export async function commandCheck(args: ParsedArgs, out: Out, err: Out): Promise<number> {
  const config = loadConfig(args.flags, process.env);
  for (const w of clearCredentialWarnings(config.clusters)) err(`cbwatch: warning: ${w.message}\n`);
  // Couchbase answers every request without credentials with 401: the table would show only that.
  for (const c of config.clusters) {
    if (c.username === undefined) err(`cbwatch: warning: cluster ${c.name} has no username (--couchbase.username, CBWATCH_COUCHBASE_USERNAME or username: in the file): Couchbase will refuse every request (401)\n`);
  }
  if (config.clusters.length === 0 && config.shard !== undefined) {
    out(`no cluster falls in shard ${config.shard.index}/${config.shard.total}: nothing to check\n`);
    return 0;
  }
  if (config.clusters.length === 0) throw new ConfigError('no cluster configured: give --couchbase.url or a --config file with clusters');
  const [{ setAnswerBudget }, { setAnswerValueLimit }, { runCheck }] = await Promise.all([import('../couchbase/answer-budget.js'), import('../couchbase/answer-values.js'), import('../check.js')]);
  setAnswerBudget(config.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES);
  setAnswerValueLimit(config.maxAnswerValues ?? DEFAULT_MAX_ANSWER_VALUES);
  const log = createLogger({ level: args.flags['log.level'] ? config.log.level : 'error', format: config.log.format });
  return runCheck(config, out, log);
}

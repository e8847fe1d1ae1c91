/**
 * The command line's dispatch: `cbwatch [run]`, `check`, `demo`, `simulate`, `healthcheck`, `rules`, `help`,
 * `version`, each command in src/commands/. User-facing output goes to stdout/stderr here and in the commands;
 * everything else logs through pino. Exit codes: 0 ok, 1 a check failed or a runtime error, 2 a bad
 * configuration or command line.
 */
import { parseArgs, usage } from './config/flags.js';
import type { ParsedArgs } from './config/flags.js';
import { ConfigError } from './errors.js';
import { installHangupHandler } from './hangup.js';
import { safeStderr } from './log.js';
import { versionText } from './metrics/build.js';
import { commandCheck } from './commands/check.js';
import type { Out } from './commands/common.js';
import { commandDemo, demoUsage } from './commands/demo.js';
import { commandHealthcheck } from './commands/healthcheck.js';
import { commandRun } from './commands/run.js';
import { commandSimulate } from './commands/simulate.js';

/**
 * The CLI's stdout. A reader that goes away early (`cbwatch rules --list | head`) is not our error: on EPIPE
 * the rest of the output is dropped quietly, where an unhandled 'error' event would print a stack trace.
 */
export function quietOnClosedPipe(stream: NodeJS.WriteStream): Out {
  let listening = false;
  let gone = false;
  return (s) => {
    if (!listening) {
      listening = true;
      stream.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code !== 'EPIPE') throw e;
        gone = true;
      });
    }
    if (!gone && !stream.destroyed) stream.write(s);
  };
}

const stdout: Out = quietOnClosedPipe(process.stdout);
// Error messages go where the log goes, through the destination that drops (and counts) what a full disk or a
// closed pipe refuses, instead of throwing (src/log.ts). It writes to fd 2 directly: process.stderr is never
// created, so a pipe on fd 2 keeps its blocking mode.
const stderr: Out = (s) => void safeStderr().write(s);

/** `cbwatch rules`: parsed apart from the other commands, since it has flags of its own (a repeatable --set). */
async function dispatchRules(argv: readonly string[], out: Out, err: Out): Promise<number> {
  // --version works with every command, as --help does (rules answers its own --help).
  const words = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : undefined);
  if (words.includes('--version') && !words.includes('--help') && !words.includes('-h')) {
    out(versionText());
    return 0;
  }
  try {
    const { commandRules } = await import('./commands/rules.js');
    return commandRules(argv, out);
  } catch (e) {
    if (e instanceof ConfigError) {
      err(`cbwatch: configuration error: ${e.message}\n`);
      err("run 'cbwatch rules --help' for usage\n");
      return 2;
    }
    err(`cbwatch: ${(e as Error).message}\n`);
    return 1;
  }
}

export async function main(argv: readonly string[], out: Out = stdout, err: Out = stderr): Promise<number> {
  // bin/cbwatch.js installed it before loading this module; callers of main() that did not get it here.
  installHangupHandler();
  if (argv[0] === 'rules') return dispatchRules(argv.slice(1), out, err);
  let args: ParsedArgs;
  try {
    args = parseArgs([...argv]);
  } catch (e) {
    err(`cbwatch: ${(e as Error).message}\n`);
    err("run 'cbwatch --help' for usage\n");
    return 2;
  }
  try {
    switch (args.command) {
      case 'help':
        // The reference stays relative: packaging/release.sh makes the .deb's manual page from this text, where an
        // absolute path would be the build's staging directory. `demo --help` has its own page.
        out(argv[0] === 'demo' ? demoUsage() : usage());
        return 0;
      case 'version':
        out(versionText());
        return 0;
      case 'check':
        return await commandCheck(args, out, err);
      case 'demo':
        return await commandDemo(args, out);
      case 'simulate':
        return await commandSimulate(args, out);
      case 'healthcheck':
        // Docker reserves exit code 2 in a HEALTHCHECK: a bad configuration is "unhealthy" (1) here.
        return await commandHealthcheck(args, out, err).catch((e: unknown) => {
          err(`cbwatch healthcheck: ${e instanceof ConfigError ? `configuration error: ${e.message}` : (e as Error).message}\n`);
          return 1;
        });
      default:
        return await commandRun(args, out);
    }
  } catch (e) {
    if (e instanceof ConfigError) {
      err(`cbwatch: configuration error: ${e.message}\n`);
      return 2;
    }
    const code = (e as { code?: unknown }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      err(`cbwatch: cannot listen: ${(e as Error).message} (choose another --web.listen-address)\n`);
      return 1;
    }
    err(`cbwatch: ${(e as Error).message}\n`);
    return 1;
  }
}

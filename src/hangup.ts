/**
 * SIGHUP for the whole life of the process. Its default action kills the process (exit 129), so the handler is
 * installed before anything else — bin/cbwatch.js imports this module, which imports nothing, before loading the
 * CLI — and is never removed: a hangup while the CLI loads, while the configuration is read or the server
 * starts, or during shutdown, is logged or ignored instead of killing the process. The
 * running daemon sets what a hangup does (a configuration reload) with `onHangup`, and clears it when it starts
 * shutting down. SIGUSR1 is ignored for the same whole life (see installHangupHandler).
 */
let handler: (() => void) | undefined;
let installed = false;
/** Hangups that arrived with no handler set (before start-up finished, or during shutdown). */
let ignored = 0;

function onSignal(): void {
  if (handler) handler();
  else ignored++;
}

/** SIGUSR1s received (and ignored). */
let usr1 = 0;

/**
 * Install the process's SIGHUP listener (once; later calls do nothing), and one for SIGUSR1: with a listener of
 * its own, SIGUSR1 no longer opens Node's inspector (its default, a debugger on 127.0.0.1:9229 that anyone local
 * could attach to). The launchers pass --disable-sigusr1 where the Node they run has it (22.14 and later); this
 * does the same on Node 20, e.g. under `npx cbwatch`. Before this module runs (the first moments after exec)
 * Node's own handlers are in place: docs/security.md, "Signals".
 */
export function installHangupHandler(): void {
  if (installed) return;
  installed = true;
  process.on('SIGHUP', onSignal);
  process.on('SIGUSR1', () => void usr1++);
}

/** How many SIGUSR1s were received and ignored. */
export function ignoredUsr1(): number {
  return usr1;
}

/** What a SIGHUP does from now on; `undefined`: ignored (start-up, shutdown). Installs the listener if needed. */
export function onHangup(fn: (() => void) | undefined): void {
  installHangupHandler();
  handler = fn;
}

/** How many hangups were ignored so far (start-up and shutdown), for the log. */
export function ignoredHangups(): number {
  return ignored;
}

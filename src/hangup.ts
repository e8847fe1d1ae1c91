/**
 * SIGHUP for the whole life of the process. Its default action kills the process (exit 129), so the handler is
 * installed before anything else — bin/cbwatch.js imports this module, which imports nothing, before loading the
 * CLI — and is never removed: a hangup while the CLI loads, while the configuration is read or the server
 * starts, or during shutdown, is logged or ignored instead of killing the process (issue 25, item 6). The
 * running daemon sets what a hangup does (a configuration reload) with `onHangup`, and clears it when it starts
 * shutting down.
 */
let handler: (() => void) | undefined;
let installed = false;
/** Hangups that arrived with no handler set (before start-up finished, or during shutdown). */
let ignored = 0;

function onSignal(): void {
  if (handler) handler();
  else ignored++;
}

/** Install the process's SIGHUP listener (once; later calls do nothing). */
export function installHangupHandler(): void {
  if (installed) return;
  installed = true;
  process.on('SIGHUP', onSignal);
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

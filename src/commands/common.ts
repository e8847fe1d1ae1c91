/**
 * What several commands share: the output type, the clear-credentials warning (run, check) and how a hint names
 * cbwatch and the package's directories (demo, simulate).
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative } from 'node:path';
import type { Config } from '../config/types.js';
import { PACKAGE_ROOT } from '../paths.js';

/** Where a command writes its user-facing text (stdout or stderr). */
export type Out = (s: string) => void;

/** Whether a URL's host is this machine's loopback (what goes there never crosses a network). */
function loopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1' || host === '::ffff:127.0.0.1';
}

/**
 * One warning per cluster whose credentials would cross a network in clear: a username (and so a password)
 * sent as basic auth over an http:// URL to a host other than loopback. The URLs are shown (they hold no
 * credentials: loadConfig refuses userinfo); never the username or password.
 */
export function clearCredentialWarnings(clusters: Config['clusters']): Array<{ cluster: string; urls: string[]; message: string }> {
  const out: Array<{ cluster: string; urls: string[]; message: string }> = [];
  for (const c of clusters) {
    if (c.username === undefined && c.password === undefined) continue;
    const plain = [c.url, c.searchUrl, c.backupUrl].filter((u): u is string => u !== undefined).filter((u) => {
      try {
        const url = new URL(u);
        return url.protocol === 'http:' && !loopback(url);
      } catch {
        return false;
      }
    });
    if (plain.length === 0) continue;
    out.push({
      cluster: c.name,
      urls: plain,
      message: `the Couchbase credentials of cluster ${c.name} go in clear over http:// to ${plain.map((u) => new URL(u).host).join(', ')}: use https:// (port 18091) so that nobody on the network reads them`,
    });
  }
  return out;
}

/**
 * How a hint names cbwatch: the way this process was started. `cbwatch` when the first `cbwatch` on PATH is this
 * package's (a global npm install links bin/cbwatch.js there; the Debian package's /usr/bin/cbwatch runs
 * ../lib/cbwatch), else the launcher by path (`./bin/cbwatch.js` from the package root, an absolute path from
 * elsewhere). Never `npx cbwatch`: outside a clone npm would look the name up in its registry, where the name
 * `cbwatch` is not this project's (whoever publishes it would be run).
 */
export function commandName(o: { readonly env: NodeJS.ProcessEnv; readonly cwd: string; readonly root: string }): string {
  const real = (p: string): string | undefined => {
    try {
      return realpathSync(p);
    } catch {
      return undefined;
    }
  };
  const root = real(o.root) ?? o.root;
  const launcher = join(root, 'bin', 'cbwatch.js');
  for (const dir of (o.env.PATH ?? '').split(delimiter)) {
    // A relative PATH entry depends on the directory the hint is typed in: not one to rely on.
    if (!isAbsolute(dir)) continue;
    const found = real(join(dir, 'cbwatch'));
    if (found === undefined) continue;
    try {
      accessSync(found, constants.X_OK);
    } catch {
      continue;
    }
    if (found === launcher || real(join(dirname(found), '..', 'lib', 'cbwatch')) === root) return 'cbwatch';
    // The shell would run this other cbwatch: name ours by its path.
    break;
  }
  return relative(o.cwd, launcher) === join('bin', 'cbwatch.js') ? './bin/cbwatch.js' : launcher;
}

/** This process's name for cbwatch (commandName), for the hints of `demo` and `simulate`. */
export function thisCommandName(): string {
  return commandName({ env: process.env, cwd: process.cwd(), root: PACKAGE_ROOT });
}

/** The installed package's directories a hint names, as absolute paths (symbolic links resolved: the .deb's docs/). */
export function packagePaths(root: string = PACKAGE_ROOT): { readonly dashboards: string; readonly docs: string } {
  const abs = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  return { dashboards: abs(join(root, 'dashboards')), docs: abs(join(root, 'docs')) };
}

/**
 * Warnings about a loaded configuration that do not stop cbwatch: a secret file that every user of the machine
 * may read. `cbwatch run` logs them at start. Only paths and modes are named, never what the files hold.
 */
import { statSync } from 'node:fs';
import type { Config } from './types.js';

export interface ConfigWarning {
  /** The file the warning is about. */
  readonly file: string;
  /** The cluster whose password it holds; absent for the webhook token. */
  readonly cluster?: string;
  readonly message: string;
}

/** Read permission for users other than the owner and the group. */
const OTHERS_READ = 0o004;

/**
 * One warning per password or token file that users other than its owner and group may read (mode `o+r`): any
 * account on the machine could take the Couchbase credentials or the webhook token from it.
 */
export function secretFileWarnings(config: Pick<Config, 'clusters' | 'webhooks'>): ConfigWarning[] {
  const out: ConfigWarning[] = [];
  const check = (file: string, what: string, cluster: string | undefined): void => {
    let mode: number;
    try {
      mode = statSync(file).mode;
    } catch {
      // Read once already by loadConfig; gone since, the next read reports it.
      return;
    }
    if ((mode & OTHERS_READ) === 0) return;
    const octal = (mode & 0o777).toString(8).padStart(4, '0');
    out.push({
      file,
      ...(cluster === undefined ? {} : { cluster }),
      message: `${what} can be read by every user of this machine (mode ${octal}): make it readable by cbwatch alone (chmod 600, or 640 with a group)`,
    });
  };
  const seen = new Set<string>();
  for (const c of config.clusters) {
    if (c.passwordFile === undefined || seen.has(c.passwordFile)) continue;
    seen.add(c.passwordFile);
    check(c.passwordFile, `the password file ${c.passwordFile} of cluster ${c.name}`, c.name);
  }
  const token = config.webhooks.syncGateway?.tokenFile;
  if (token !== undefined) check(token, `the Sync Gateway webhook token file ${token}`, undefined);
  return out;
}

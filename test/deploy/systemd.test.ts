/**
 * deploy/systemd/cbwatch.service: `systemd-analyze verify` accepts it without a single warning (an unknown
 * or misspelt directive is only a warning to systemd, so stderr must be empty), `systemd-analyze security
 * --offline` rates it well, it carries the hardening the README promises, and the example configuration it
 * pairs with loads the password from $CREDENTIALS_DIRECTORY as LoadCredential= provides it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { findBinary } from '../helpers/tools.js';

const analyze = findBinary('systemd-analyze');
if (!analyze && process.env.CI === 'true') throw new Error('systemd-analyze not found: install Debian\'s systemd package (bash .ci/run does)');
if (!analyze) console.warn('skipping systemd-analyze checks: systemd-analyze not found');

const UNIT = join(PACKAGE_ROOT, 'deploy', 'systemd', 'cbwatch.service');
const unitText = readFileSync(UNIT, 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'cbwatch-systemd-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Directives of the [Service] section, by key (a key may repeat). */
function serviceDirectives(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let section = '';
  for (const line of text.split('\n')) {
    const s = /^\[(\w+)\]$/.exec(line.trim());
    if (s) section = s[1] as string;
    const kv = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (kv && section === 'Service') out.set(kv[1] as string, [...(out.get(kv[1] as string) ?? []), kv[2] as string]);
  }
  return out;
}

/** The unit as verify sees it: the same text, with node where this machine has it if not in /opt/cbwatch/node. */
function unitCopy(): string {
  const p = join(tmp, 'cbwatch.service');
  writeFileSync(p, existsSync('/opt/cbwatch/node/bin/node') ? unitText : unitText.replaceAll('/opt/cbwatch/node/bin/node ', `${process.execPath} `));
  return p;
}

describe('deploy/systemd/cbwatch.service', () => {
  const d = serviceDirectives(unitText);

  it('is hardened: dynamic user, no capabilities, read-only system, private tmp, credentials by LoadCredential', () => {
    const one = (k: string): string | undefined => d.get(k)?.at(-1);
    expect(one('DynamicUser')).toBe('yes');
    expect(one('NoNewPrivileges')).toBe('yes');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('ProtectHome')).toBe('yes');
    expect(one('PrivateTmp')).toBe('yes');
    expect(one('PrivateDevices')).toBe('yes');
    expect(one('CapabilityBoundingSet')).toBe('');
    expect(one('RestrictAddressFamilies')).toBe('AF_INET AF_INET6 AF_UNIX');
    expect(one('SystemCallFilter')).toBe('@system-service');
    expect(one('RestartPreventExitStatus')).toBe('2');
    expect(d.get('LoadCredential')).toEqual(['couchbase-password:/etc/cbwatch/couchbase-password']);
    // No secret on the command line or in the environment.
    expect(d.get('ExecStart')?.join(' ')).not.toMatch(/password/i);
    expect((d.get('Environment') ?? []).join(' ')).not.toMatch(/PASSWORD/);
    // V8 needs W+X pages: MemoryDenyWriteExecute=yes would crash node at start.
    expect(d.has('MemoryDenyWriteExecute')).toBe(false);
  });

  it('the example configuration reads the password from $CREDENTIALS_DIRECTORY', () => {
    const credDir = join(tmp, 'credentials', 'cbwatch.service');
    mkdirSync(credDir, { recursive: true });
    const [name, source] = (d.get('LoadCredential')?.[0] ?? '').split(':') as [string, string];
    expect(source).toBe('/etc/cbwatch/couchbase-password');
    writeFileSync(join(credDir, name), 'from-the-credential\n');
    const configPath = /--config (\S+)/.exec(d.get('ExecStart')?.[0] ?? '')?.[1];
    expect(configPath).toBe('/etc/cbwatch/cbwatch.yml');
    const example = join(PACKAGE_ROOT, 'deploy', 'systemd', 'cbwatch.yml');
    const config = loadConfig({ config: example }, { CREDENTIALS_DIRECTORY: credDir });
    expect(config.clusters[0]?.password).toBe('from-the-credential');
    // Outside systemd the variable is unset: the error names the key and the path as written.
    expect(() => loadConfig({ config: example }, {})).toThrow(/password_file: cannot read "\$CREDENTIALS_DIRECTORY\/couchbase-password"/);
  });

  it.skipIf(!analyze)('systemd-analyze verify passes with no warning', () => {
    const r = spawnSync(analyze as string, ['verify', unitCopy()], { encoding: 'utf8', cwd: tmp });
    expect(r.stderr.trim()).toBe('');
    expect(r.status).toBe(0);
  });

  it.skipIf(!analyze)('systemd-analyze verify would catch a misspelt directive (the check is live)', () => {
    const p = join(tmp, 'broken.service');
    writeFileSync(p, readFileSync(unitCopy(), 'utf8').replace('PrivateTmp=yes', 'PrivateTmpp=yes'));
    const r = spawnSync(analyze as string, ['verify', p], { encoding: 'utf8', cwd: tmp });
    expect(r.stderr).toMatch(/Unknown key 'PrivateTmpp'/);
  });

  it.skipIf(!analyze)('systemd-analyze security rates the exposure at most 2.0 ("OK")', () => {
    const r = spawnSync(analyze as string, ['security', '--offline=yes', '--no-pager', unitCopy()], { encoding: 'utf8', cwd: tmp });
    const m = /Overall exposure level for \S+: ([\d.]+)/.exec(r.stdout + r.stderr);
    expect(m, r.stdout + r.stderr).not.toBeNull();
    expect(Number((m as RegExpExecArray)[1])).toBeLessThanOrEqual(2);
  });
});

/** A password or token file that every user of the machine may read is reported at start, by path and mode only. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { secretFileWarnings } from '../../src/config/warnings.js';

const dir = mkdtempSync(join(tmpdir(), 'cbwatch-warn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SECRET = 'pw-that-must-not-show-9Tz';

function secretFile(name: string, mode: number): string {
  const p = join(dir, name);
  writeFileSync(p, `${SECRET}\n`);
  chmodSync(p, mode);
  return p;
}

function configWith(passwordFile: string, tokenFile?: string) {
  const file = join(dir, `cbwatch-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(
    file,
    [
      'clusters:',
      '  - name: prod',
      '    url: http://127.0.0.1:8091',
      '    username: cbwatch',
      `    password_file: ${passwordFile}`,
      ...(tokenFile === undefined ? [] : ['webhooks:', '  sync_gateway:', '    enabled: true', `    token_file: ${tokenFile}`]),
    ].join('\n'),
  );
  return loadConfig({ config: file }, {});
}

describe('secretFileWarnings', () => {
  it('warns about a password file other users can read, naming the file, the cluster and the mode', () => {
    const pw = secretFile('readable', 0o644);
    const warnings = secretFileWarnings(configWith(pw));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ file: pw, cluster: 'prod' });
    expect(warnings[0]?.message).toContain(`the password file ${pw} of cluster prod can be read by every user of this machine (mode 0644)`);
    expect(JSON.stringify(warnings)).not.toContain(SECRET);
  });

  it('says nothing of a file for its owner alone, or its owner and group', () => {
    expect(secretFileWarnings(configWith(secretFile('owner', 0o600)))).toEqual([]);
    expect(secretFileWarnings(configWith(secretFile('group', 0o640)))).toEqual([]);
  });

  it('warns about the --couchbase.password-file of the shortcut and the webhook token file too', () => {
    const pw = secretFile('shortcut', 0o604);
    const c = loadConfig({ 'couchbase.url': 'http://127.0.0.1:8091', 'couchbase.username': 'u', 'couchbase.password-file': pw }, {});
    expect(secretFileWarnings(c).map((w) => w.file)).toEqual([pw]);
    const token = join(dir, 'token');
    writeFileSync(token, 'abcdefghijklmnop-token');
    chmodSync(token, 0o644);
    const withToken = configWith(secretFile('quiet', 0o600), token);
    expect(secretFileWarnings(withToken).map((w) => w.message)).toEqual([
      `the Sync Gateway webhook token file ${token} can be read by every user of this machine (mode 0644): make it readable by cbwatch alone (chmod 600, or 640 with a group)`,
    ]);
  });
});

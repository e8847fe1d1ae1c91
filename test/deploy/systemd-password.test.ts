/**
 * Issue 26, item 4: the systemd unit's install comment must not put the password on the command line (where
 * it lands in shell history and in ps). Its command is run as written (paths moved to a temporary
 * directory), with the password typed on standard input.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const UNIT = readFileSync(join(import.meta.dirname, '..', '..', 'deploy', 'systemd', 'cbwatch.service'), 'utf8');

describe('deploy/systemd/cbwatch.service install comment', () => {
  const line = UNIT.split('\n').find((l) => l.startsWith('#') && l.includes('/etc/cbwatch/couchbase-password') && /install /.test(l));

  it('names no password in the command (no here-string, echo or argument carrying it)', () => {
    expect(line).toBeDefined();
    const cmd = (line as string).replace(/^#\s*/, '');
    expect(cmd).not.toMatch(/<<<|<<\s*\w|\becho\b|--password|password=/);
    // The secret comes from a prompt that does not echo.
    expect(cmd).toMatch(/\bread -rs|systemd-ask-password/);
  });

  it('writes the typed password, without a newline, to a root-only file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cbw-systemd-pw-'));
    const cmd = (line as string).replace(/^#\s*/, '').replaceAll('/etc/cbwatch/', `${dir}/`);
    execFileSync('bash', ['-c', cmd], { input: 's3cret pass\n', stdio: ['pipe', 'pipe', 'pipe'], timeout: 10_000 });
    const file = join(dir, 'couchbase-password');
    expect(readFileSync(file, 'utf8')).toBe('s3cret pass');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

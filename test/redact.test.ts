import { describe, expect, it } from 'vitest';
import { Redactor, base64Variants, safeExcerpt } from '../src/redact.js';

const PW = 'Tr0ub4dor&3-horse';

describe('Redactor', () => {
  const r = new Redactor().addCredentials('cbwatch', PW).add('webhook-token-0123456789');

  it.each([
    ['the password itself', `bad password ${PW} given`],
    ['URL-encoded', `q=${encodeURIComponent(PW)}`],
    ['base64 of the password', `x ${Buffer.from(PW).toString('base64')} y`],
    ['base64 of user:password', `auth ${Buffer.from(`cbwatch:${PW}`).toString('base64')}`],
    ['base64 of another user:password', `YWxs${Buffer.from(`someoneelse:${PW}`).toString('base64')}`],
    ['JSON-escaped', JSON.stringify({ note: PW })],
    ['the webhook token', 'path /webhooks/sync-gateway/db/webhook-token-0123456789'],
  ])('removes %s', (_n, text) => {
    const out = r.redact(text);
    expect(out).toContain('[redacted]');
    expect(out).not.toContain(PW);
    expect(out).not.toContain(Buffer.from(PW).toString('base64').slice(0, 12));
    expect(out).not.toContain('webhook-token-0123456789');
  });

  it.each([
    ['Authorization header', 'Authorization: Basic dXNlcjpwYXNz', 'dXNlcjpwYXNz'],
    ['lower-case header', '{"headers":{"authorization":"Bearer abc.def.ghi"}}', 'abc.def.ghi'],
    ['bindPass field', '{"bindPass":"ldap-secret","hosts":["ldap1"]}', 'ldap-secret'],
    ['password field', '{"password": "hunter22"}', 'hunter22'],
    ['token field', '{"token":"t0k3n-value"}', 't0k3n-value'],
    ['secret field', '{"clientSecret":"sssh-value"}', 'sssh-value'],
    ['key field', '{"apiKey":"AKIA1234567"}', 'AKIA1234567'],
    ['key=value', 'error: password=hunter22&user=x', 'hunter22'],
    ['bindPass: value', 'bindPass: ldap-secret', 'ldap-secret'],
    ['Erlang binary', '{bindPass,<<"ldap-secret">>}', 'ldap-secret'],
    ['URL userinfo', 'connect to ldap://admin:ldap-secret@ldap1:389 failed', 'ldap-secret'],
    ['cookie', 'Cookie: ui-auth-q=abcdef123', 'abcdef123'],
  ])('removes an unknown secret in a %s', (_n, text, secret) => {
    const out = r.redact(text);
    expect(out, out).not.toContain(secret);
  });

  it('keeps the useful part of an error body', () => {
    expect(r.redact('{"errors":{"bucket":"Bucket not found"}}')).toBe('{"errors":{"bucket":"Bucket not found"}}');
  });

  it('base64 variants cover every alignment', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', 'user:']) {
      const enc = Buffer.from(`${prefix}${PW}tail`).toString('base64');
      expect(base64Variants(PW).some((v) => enc.includes(v)), prefix).toBe(true);
    }
  });

  it('redacts before cutting an excerpt', () => {
    const text = `${'x'.repeat(150)} password=${PW}`;
    expect(safeExcerpt(text, r)).not.toContain(PW.slice(0, 5));
  });

  it('reads past whitespace: 16 KB of spaces, then the password (issue 25: 16 of its 17 characters leaked)', () => {
    for (let pad = 16 * 1024 - 20; pad <= 16 * 1024 + 2; pad++) {
      const out = safeExcerpt(`${' '.repeat(pad)}${PW}`, r);
      expect(out, String(pad)).not.toContain(PW.slice(0, 6));
      expect(out).toBe('[redacted]');
    }
  });

  it('never cuts a secret into a shown prefix, wherever the text is cut', () => {
    // Redactions shorten the text (17 characters become 10), so the shown part reaches towards the cut; and
    // a secret in credential form (`user:pass@`) must not be split either.
    for (const unit of [`${PW} `, `${PW}`, `https://u:${PW}@h/ `, `${'\n'.repeat(70)}${PW},`]) {
      for (let extra = 0; extra < 40; extra++) {
        const text = `${'y'.repeat(extra)}${unit.repeat(400)}`;
        const out = safeExcerpt(text, r, 160);
        expect(out.length).toBeLessThanOrEqual(160);
        // Every prefix of 4 characters or more starts with this one.
        expect(out, `${JSON.stringify(unit)} ${extra}`).not.toContain(PW.slice(0, 4));
      }
    }
  });

  it('a long secret repeated: the shown part reaches the cut, and the cut secret is not shown', () => {
    const long = `L0ng-${'s3cr3t'.repeat(33)}`;
    const red = new Redactor().add(long);
    for (let extra = 0; extra < 60; extra++) {
      const out = safeExcerpt(`${'y'.repeat(extra)} ${`${long} `.repeat(200)}`, red, 1000);
      expect(out, String(extra)).not.toContain('L0ng');
      expect(out).not.toContain('s3cr3ts3cr3t');
      expect(out).toContain('[redacted]');
    }
  });

  it('cuts a long text on a boundary and says so', () => {
    const out = safeExcerpt(`${'word '.repeat(5000)}`, r, 40);
    expect(out).toBe(`${'word '.repeat(7)}wo...`);
    const tail = safeExcerpt(`start ${'z'.repeat(1_000_000)}`, r, 160);
    expect(tail).toBe('start...');
  });

  it('secrets of 1-3 characters are not registered (documented in docs/security.md)', () => {
    const short = new Redactor().add('abc');
    expect(short.redact('abc')).toBe('abc');
    expect(new Redactor().add('abcd').redact('xabcdx')).toBe('x[redacted]x');
  });

  it.each([
    ['form-encoded', (s: string) => new URLSearchParams({ p: s }).toString()],
    ['lower-case percent-encoding', (s: string) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
    ['JSON with escaped solidus', (s: string) => JSON.stringify(s).replace(/\//g, '\\/')],
    ['JSON with ASCII-only escapes', (s: string) => JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)],
  ])('removes a secret with spaces, slashes and accents %s', (_n, encode) => {
    const secret = 'pass wörd/ça va';
    const red = new Redactor().add(secret);
    const out = red.redact(`x=${encode(secret)}&y=1`);
    expect(out, out).toContain('[redacted]');
    expect(out).not.toContain('w%C3%B6rd');
    expect(out).not.toContain('rd/');
  });
});


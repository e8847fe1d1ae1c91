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
});

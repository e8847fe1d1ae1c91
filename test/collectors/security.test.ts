/**
 * Collector `security`: golden expositions on the real /settings/security and /settings/ldap captures; the
 * 7.x per-service answers; effective (inherited) per-service values; bad input; LDAP 403 handling; secrets.
 *
 * The 7.x /settings/security captures are all ELIDED by the docs ('.' lines standing for more cipher
 * suites). The 7.x golden uses them with the '.' lines removed and — for the truncated per-service `data`
 * example — the open array and object closed: every field and value is the docs' own, only the elided
 * list entries are missing, so the supported-suite counts are those of the visible entries.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { runPoll } from '../../src/collectors/context.js';
import { ldapEncryption, mapLdap, mapSecurity, securityCollector } from '../../src/collectors/security.js';
import { defaultClusterConfig, resolveCollectorOptions } from '../../src/config/defaults.js';
import { ldapSchema, securityGlobalSchema } from '../../src/couchbase/security.js';
import { SampleSet } from '../../src/metrics/family.js';
import { collect, fakeClient, fixtureText, loadFixture } from '../helpers/collect.js';
import { requireBinary } from '../helpers/tools.js';

/** Drop the docs' '.' elision lines, fix the comma they leave before a closing bracket, close what is open. */
function unelide(rel: string): Record<string, unknown> {
  let t = fixtureText(rel)
    .split('\n')
    .filter((l) => l.trim() !== '.')
    .join('\n')
    .replace(/,(\s*[\]}])/g, '$1')
    .trimEnd();
  const opens: string[] = [];
  for (const ch of t.replace(/"(?:[^"\\]|\\.)*"/g, '')) {
    if (ch === '{' || ch === '[') opens.push(ch);
    if (ch === '}' || ch === ']') opens.pop();
  }
  t = t.replace(/,$/, '');
  while (opens.length > 0) t += opens.pop() === '{' ? '}' : ']';
  return JSON.parse(t) as Record<string, unknown>;
}

const SERVICES = ['data', 'fullTextSearch', 'index', 'eventing', 'query', 'analytics', 'backup', 'clusterManager'];

function routes6x(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    '/settings/security': loadFixture('settings-security/docs-server-6.5-6.6-explicit.json'),
    // 6.5/6.6 have no per-service settings: the route is unknown (404) for every service.
    '/settings/security/{service}': { status: 404, text: '"Not found."' },
    '/settings/ldap': loadFixture('settings-ldap/docs-server-6.5-7.2.json'),
    '/internalSettings': { indexAwareRebalanceDisabled: false, maxBucketCount: 30 },
    ...over,
  };
}

function routes7x(over: Record<string, unknown> = {}): Record<string, unknown> {
  const global = unelide('settings-security/docs-server-7.6plus-all-services.elided.json');
  const data = unelide('settings-security-service/docs-server-7.1plus-data.elided.json');
  return {
    '/settings/security': global,
    '/settings/security/{service}': (p: Record<string, string>) => (p.service === 'data' ? data : (global[p.service as string] ?? { status: 404 })),
    '/settings/ldap': loadFixture('settings-ldap/docs-server-7.6plus.json'),
    '/internalSettings': { indexAwareRebalanceDisabled: true },
    ...over,
  };
}

function memoryLog(level: string): { log: pino.Logger; lines: Array<Record<string, unknown>>; text: () => string } {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      raw.push(chunk.toString('utf8'));
      cb();
    },
  });
  return {
    log: pino({ level }, sink),
    get lines() {
      return raw.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    text: () => raw.join(''),
  };
}

describe('security collector: golden', () => {
  it('maps the real 6.5/6.6 settings and the configured LDAP capture (per-service 404s are skipped)', async () => {
    const r = await collect(securityCollector, fakeClient(routes6x()));
    expect(r.ok, String(r.error)).toBe(true);
    await expect(r.text).toMatchFileSnapshot('../golden/security.prom');
    expect(r.skipped.get('service_not_available')).toBe(8);
    expect(r.set.get('couchbase_security_tls_min_version', { service: 'global', version: 'tlsv1.1' })).toBe(1);
    expect(r.set.get('couchbase_security_tls_min_version', { service: 'global', version: 'tlsv1.2' })).toBe(0);
    expect(r.set.get('couchbase_security_cluster_encryption_level', { level: 'control' })).toBe(1);
    expect(r.set.get('couchbase_security_cipher_suites_configured', { service: 'global' })).toBe(2);
    expect(r.set.get('couchbase_ldap_encryption', { encryption: 'starttls' })).toBe(1);
    expect(r.set.get('couchbase_ldap_hosts')).toBe(1);
    expect(r.set.get('couchbase_index_aware_rebalance_disabled')).toBe(0);
  });

  it('maps the 7.x settings with per-service answers and the 7.6 LDAP defaults', async () => {
    const client = fakeClient(routes7x());
    const r = await collect(securityCollector, client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.skipped.size).toBe(0);
    await expect(r.text).toMatchFileSnapshot('../golden/security-7x.prom');
    expect(client.calls.filter((c) => c.route === '/settings/security/{service}').map((c) => c.params.service).sort()).toEqual([...SERVICES].sort());
    // data sets its own tlsv1.3; the others inherit the global tlsv1.2.
    expect(r.set.get('couchbase_security_tls_min_version', { service: 'data', version: 'tlsv1.3' })).toBe(1);
    expect(r.set.get('couchbase_security_tls_min_version', { service: 'query', version: 'tlsv1.2' })).toBe(1);
    expect(r.set.get('couchbase_security_cipher_suites_configured', { service: 'data' })).toBe(3);
    expect(r.set.all('couchbase_security_cluster_encryption_level')).toEqual([]);
    // 7.6 answers encryption "None" when LDAP is unconfigured.
    expect(r.set.get('couchbase_ldap_encryption', { encryption: 'none' })).toBe(1);
    expect(r.set.get('couchbase_ldap_cache_value_lifetime_seconds')).toBe(300);
    expect(r.set.get('couchbase_ldap_request_timeout_seconds')).toBe(5);
    expect(r.set.get('couchbase_index_aware_rebalance_disabled')).toBe(1);
  });

  it('maps the 6.5/6.6 defaults capture: tlsv1, no node-to-node encryption', async () => {
    const r = await collect(securityCollector, fakeClient(routes6x({ '/settings/security': loadFixture('settings-security/docs-server-6.5-6.6-default.json') })));
    expect(r.set.get('couchbase_security_tls_min_version', { service: 'global', version: 'tlsv1' })).toBe(1);
    expect(r.set.all('couchbase_security_cluster_encryption_level')).toEqual([]);
    expect(r.set.all('couchbase_security_www_authenticate_disabled')).toEqual([]);
  });

  it.skipIf(!requireBinary('promtool'))('golden files pass promtool check metrics', () => {
    for (const f of ['security.prom', 'security-7x.prom']) {
      const text = readFileSync(join(import.meta.dirname, '..', 'golden', f), 'utf8');
      const out = execFileSync(requireBinary('promtool') as string, ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: 'pipe' });
      expect(out.trim(), f).toBe('');
    }
  });
});

describe('security collector: mapping rules', () => {
  it('a service falls back to its sub-object in the global answer when its own route is missing', () => {
    const out = new SampleSet();
    const skipped: string[] = [];
    const global = securityGlobalSchema.parse({ tlsMinVersion: 'tlsv1.2', honorCipherOrder: false, index: { tlsMinVersion: 'tlsv1.1', supportedCipherSuites: ['A', 'B'] } });
    mapSecurity(global, new Map(), out, (r) => skipped.push(r));
    expect(out.get('couchbase_security_tls_min_version', { service: 'index', version: 'tlsv1.1' })).toBe(1);
    expect(out.get('couchbase_security_honor_cipher_order', { service: 'index' })).toBe(0);
    expect(out.get('couchbase_security_cipher_suites_supported', { service: 'index' })).toBe(2);
    expect(skipped.filter((s) => s === 'service_not_available')).toHaveLength(7);
  });

  it('an unknown service, TLS version or encryption level is counted, not guessed', () => {
    const out = new SampleSet();
    const skipped: string[] = [];
    const global = securityGlobalSchema.parse({ tlsMinVersion: 'tlsv1.4', clusterEncryptionLevel: 'paranoid', quantumSearch: { tlsMinVersion: 'tlsv1.2' }, allowedHosts: ['*'], responseHeaders: {} });
    mapSecurity(global, new Map([['data', { tlsMinVersion: 'tlsv1.2' }]]), out, (r) => skipped.push(r));
    expect(skipped.sort()).toEqual(['service_not_available', 'service_not_available', 'service_not_available', 'service_not_available', 'service_not_available', 'service_not_available', 'service_not_available', 'unknown_encryption_level', 'unknown_service', 'unknown_tls_version']);
    expect(out.all('couchbase_security_tls_min_version').filter((s) => s.labels.service === 'global')).toEqual([]);
    expect(out.get('couchbase_security_tls_min_version', { service: 'data', version: 'tlsv1.2' })).toBe(1);
    expect(out.all('couchbase_security_cluster_encryption_level')).toEqual([]);
  });

  it('missing and null fields emit nothing (not zeros)', () => {
    const out = new SampleSet();
    mapSecurity(securityGlobalSchema.parse({ tlsMinVersion: null, disableUIOverHttp: null }), new Map(), out, () => undefined);
    mapLdap(ldapSchema.parse({ cacheValueLifetime: null, requestTimeout: null, encryption: null, hosts: null }), out, () => undefined);
    expect(out.size).toBe(0);
  });

  it('maps every LDAP encryption spelling', () => {
    expect(ldapEncryption('StartTLSExtension')).toBe('starttls');
    expect(ldapEncryption('TLS')).toBe('tls');
    expect(ldapEncryption('false')).toBe('none');
    expect(ldapEncryption(false)).toBe('none');
    expect(ldapEncryption('None')).toBe('none');
    expect(ldapEncryption('ROT13')).toBeUndefined();
    expect(ldapEncryption(undefined)).toBeUndefined();
  });

  it('hosts written as a comma-separated string are counted', () => {
    expect(ldapSchema.parse({ hosts: 'a.example, b.example,' }).hosts).toEqual(['a.example', 'b.example']);
  });

  it('LDAP secrets never leave the schema, reach a metric or a log line', async () => {
    const secret = {
      bindPass: 'bind-S3cr3t-value',
      clientTLSKey: '-----BEGIN PRIVATE KEY-----\nS3cr3tKeyMaterial\n-----END PRIVATE KEY-----',
      clientTLSCert: '-----BEGIN CERTIFICATE-----\nClientCertMaterial\n-----END CERTIFICATE-----',
      cacert: '-----BEGIN CERTIFICATE-----\nCaCertMaterial\n-----END CERTIFICATE-----',
      bindDN: 'cn=SecretBindDn,dc=example',
      groupsQuery: 'ou=SecretGroups??one?(member=%D)',
      userDNMapping: { template: 'uid=%u,ou=SecretUsers' },
    };
    const parsed = ldapSchema.parse({ ...loadFixture<Record<string, unknown>>('settings-ldap/docs-server-6.5-7.2.json'), ...secret });
    expect(Object.keys(parsed).sort()).toEqual(['authenticationEnabled', 'authorizationEnabled', 'encryption', 'hosts', 'port']);
    const m = memoryLog('trace');
    const client = fakeClient(routes6x({ '/settings/ldap': { ...loadFixture<Record<string, unknown>>('settings-ldap/docs-server-6.5-7.2.json'), ...secret, encryption: 'Enigma' } }));
    const r = await runPoll({ collector: securityCollector, cluster: defaultClusterConfig({ url: client.baseUrl }), options: resolveCollectorOptions('security', undefined), client, log: m.log });
    expect(r.ok).toBe(true);
    const { renderSets } = await import('../../src/metrics/render.js');
    const all = `${await renderSets([{ base: { couchbase_cluster: 't' }, set: r.set }])}\n${m.text()}`;
    for (const needle of ['S3cr3t', 'KeyMaterial', 'CertMaterial', 'SecretBindDn', 'SecretGroups', 'SecretUsers']) expect(all).not.toContain(needle);
    expect(r.skipped.get('unknown_ldap_encryption')).toBe(1);
  });
});

describe('security collector: permissions and failures', () => {
  it('403 on /settings/ldap is reported (skipped + one warning naming the permission); the rest succeeds', async () => {
    const m = memoryLog('debug');
    const client = fakeClient(routes7x({ '/settings/ldap': { status: 403, body: { message: 'Forbidden. User needs the following permissions', permissions: ['cluster.admin.security.external!read'] } } }));
    const state = new Map<string, unknown>();
    for (let i = 0; i < 3; i++) {
      const r = await runPoll({ collector: securityCollector, cluster: defaultClusterConfig({ url: client.baseUrl }), options: resolveCollectorOptions('security', undefined), client, state, log: m.log });
      expect(r.ok).toBe(true);
      expect(r.skipped.get('forbidden')).toBe(1);
      expect(r.set.all('couchbase_ldap_authentication_enabled')).toEqual([]);
      expect(r.set.get('couchbase_security_tls_min_version', { service: 'data', version: 'tlsv1.3' })).toBe(1);
    }
    const warns = m.lines.filter((l) => l.level === 40);
    expect(warns).toHaveLength(1);
    expect(warns[0]?.permissions).toEqual(['cluster.admin.security.external!read']);
    expect(String(warns[0]?.msg)).toContain('cluster.admin.security.external!read');
  });

  it('a 404 on /settings/ldap (Community Edition) and on /internalSettings is skipped', async () => {
    const r = await collect(securityCollector, fakeClient(routes7x({ '/settings/ldap': { status: 404 }, '/internalSettings': { status: 404 } })));
    expect(r.ok).toBe(true);
    expect(r.skipped.get('ldap_not_available')).toBe(1);
    expect(r.skipped.get('internal_settings_not_available')).toBe(1);
  });

  it('fails when the global settings call fails (HTTP error, bad JSON, wrong shape)', async () => {
    for (const answer of [{ status: 500, text: 'boom' }, { fail: 'invalid_json' }, { status: 200, body: { tlsMinVersion: 12 } }, { status: 403, body: { permissions: ['cluster.admin.security!read'] } }]) {
      const r = await collect(securityCollector, fakeClient(routes7x({ '/settings/security': answer })));
      expect(r.ok, JSON.stringify(answer)).toBe(false);
    }
  });

  it('a per-service failure other than 404/403 is an item error: that service has no series (no fallback), the others stay', async () => {
    const base = routes7x();
    const perService = base['/settings/security/{service}'] as (p: Record<string, string>) => unknown;
    const r = await collect(securityCollector, fakeClient({ ...base, '/settings/security/{service}': (p: Record<string, string>) => (p.service === 'data' ? { status: 500, text: 'boom' } : perService(p)) }));
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.itemErrors.get('http_5xx')).toBe(1);
    expect(r.set.all('couchbase_security_tls_min_version').filter((s) => s.labels.service === 'data')).toEqual([]);
    expect(r.set.all('couchbase_security_tls_min_version').filter((s) => s.labels.service === 'global').length).toBe(4);
  });

  it('fails the poll when every sub-endpoint fails', async () => {
    const boom = { status: 500, text: 'boom' };
    const r = await collect(securityCollector, fakeClient(routes7x({ '/settings/security/{service}': boom, '/settings/ldap': boom, '/internalSettings': boom })));
    expect(r.ok).toBe(false);
  });
});

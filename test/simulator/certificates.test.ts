/**
 * The simulator's certificates and security settings against the real collectors and client:
 * - the PKI module builds certificates that node:crypto parses and verifies, with dates to the second;
 * - couchbase_trusted_ca_not_after_timestamp_seconds and the node certificate's not-after equal the dates in
 *   the PEMs the simulator serves, to the second; the chain is exported certificate by certificate;
 * - the limited trustedCAs view for a low-privilege (or no) user, the pre-7.1 mode, the scenarios;
 * - a whole daemon run (demo scenario, logs at trace) never shows the LDAP bind password or the node key
 *   passphrase in /metrics or in any log line.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificatesCollector } from '../../src/collectors/certificates.js';
import { securityCollector } from '../../src/collectors/security.js';
import { createClient } from '../../src/couchbase/client.js';
import type { CouchbaseClient } from '../../src/couchbase/client.js';
import { splitPemBundle } from '../../src/couchbase/certificates.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { simCertificates } from '../../src/simulator/modules/certificates.js';
import { simSecurity } from '../../src/simulator/modules/security.js';
import { createCertificate, verifies } from '../../src/simulator/pki.js';
import { collect } from '../helpers/collect.js';
import { startHarness } from '../helpers/daemon.js';

const DAY = 86_400;
const seconds = (validTo: string): number => Date.parse(validTo) / 1000;

async function started(opts: Parameters<typeof createSimulator>[0] = {}, user: 'admin' | 'limited' = 'admin'): Promise<{ sim: Simulator; url: string; client: CouchbaseClient; close: () => Promise<void> }> {
  const sim = createSimulator(opts);
  const url = await sim.listen();
  const u = sim.ctx.options.users[user];
  const client = createClient({ cluster: 't', url, username: u.username, password: u.password });
  return {
    sim,
    url,
    client,
    close: async () => {
      await client.close();
      await sim.close();
    },
  };
}

describe('pki', () => {
  it('builds a chain node:crypto parses and verifies, with whole-second dates', () => {
    const root = createCertificate({ subject: { C: 'US', O: 'Example', CN: 'Root' }, notBefore: new Date('2020-01-01T00:00:00.750Z'), notAfter: new Date('2060-06-30T12:34:56.999Z'), ca: true });
    const int = createCertificate({ subject: { O: 'Example', CN: 'Issuing' }, notBefore: new Date('2021-01-01T00:00:00Z'), notAfter: new Date('2049-12-31T23:59:59Z'), ca: true }, root);
    const leaf = createCertificate({ subject: { CN: 'cb1.example.com' }, notBefore: new Date('2024-01-01T00:00:00Z'), notAfter: new Date('2025-01-01T00:00:00Z'), ca: false, altNames: ['cb1.example.com', '10.0.0.1'] }, int);
    expect(verifies(root)).toBe(true);
    expect(verifies(int, root)).toBe(true);
    expect(verifies(leaf, int)).toBe(true);
    expect(verifies(leaf, root)).toBe(false);
    const x = new X509Certificate(root.pem);
    // 2060 needs GeneralizedTime, 2049 UTCTime: both read back exactly.
    expect(seconds(x.validTo)).toBe(Date.parse('2060-06-30T12:34:56Z') / 1000);
    expect(seconds(x.validFrom)).toBe(Date.parse('2020-01-01T00:00:00Z') / 1000);
    expect(seconds(new X509Certificate(int.pem).validTo)).toBe(Date.parse('2049-12-31T23:59:59Z') / 1000);
    expect(x.subject).toBe('C=US\nO=Example\nCN=Root');
    expect(x.ca).toBe(true);
    const l = new X509Certificate(leaf.pem);
    expect(l.ca).toBe(false);
    expect(l.subjectAltName).toBe('DNS:cb1.example.com, IP Address:10.0.0.1');
    expect(l.issuer).toBe('O=Example\nCN=Issuing');
  });
});

describe('simulator certificates against the collector (default scenario)', () => {
  let env: Awaited<ReturnType<typeof started>>;
  beforeAll(async () => {
    env = await started();
  });
  afterAll(async () => {
    await env?.close();
  });

  it('trusted CA and node certificate not-after equal the dates in the served PEMs, to the second', async () => {
    const r = await collect(certificatesCollector, env.client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.skipped.size).toBe(0);

    const cas = (await (await fetch(`${env.url}/pools/default/trustedCAs`)).json()) as Array<{ id: number; pem: string; subject: string }>;
    expect(cas.length).toBeGreaterThan(0);
    for (const ca of cas) {
      const x = new X509Certificate(ca.pem);
      expect(r.set.get('couchbase_trusted_ca_not_after_timestamp_seconds', { id: String(ca.id), subject: ca.subject })).toBe(seconds(x.validTo));
      expect(r.set.get('couchbase_trusted_ca_not_before_timestamp_seconds', { id: String(ca.id) })).toBe(seconds(x.validFrom));
    }

    const nodes = r.set.all('couchbase_node_certificate_not_after_timestamp_seconds');
    expect(nodes).toHaveLength(env.sim.ctx.nodes.length);
    const auth = `Basic ${Buffer.from('Administrator:password').toString('base64')}`;
    for (const s of nodes) {
      const node = s.labels.node as string;
      const body = (await (await fetch(`${env.url}/pools/default/certificate/node/${encodeURIComponent(node)}`, { headers: { authorization: auth } })).json()) as { pem: string };
      const chain = splitPemBundle(body.pem).map((p) => new X509Certificate(p));
      expect(chain).toHaveLength(2);
      expect(s.value).toBe(seconds((chain[0] as X509Certificate).validTo));
      chain.forEach((x, position) => {
        expect(r.set.get('couchbase_node_certificate_chain_not_after_timestamp_seconds', { node, position: String(position) })).toBe(seconds(x.validTo));
      });
      expect(r.set.get('couchbase_node_certificate_earliest_not_after_timestamp_seconds', { node })).toBe(Math.min(...chain.map((x) => seconds(x.validTo))));
    }

    // The default scenario: root CA valid five years from the simulator's start.
    const s = simCertificates(env.sim.ctx);
    expect(r.set.get('couchbase_trusted_ca_not_after_timestamp_seconds', { id: '1' })).toBe(Math.floor((env.sim.ctx.startedAt + 1825 * DAY * 1000) / 1000));
    expect(r.set.get('couchbase_trusted_ca_not_after_timestamp_seconds', { id: '1' })).toBe(s.root.notAfter.getTime() / 1000);
    expect(r.set.get('couchbase_node_certificate_chain_info', { position: '1', subject: 'O=cbsim, CN=cbsim Intermediate CA', issuer: 'O=cbsim, CN=cbsim Root CA' })).toBe(1);
    expect(r.set.get('couchbase_trusted_ca_nodes', { id: '1' })).toBe(env.sim.ctx.nodes.length);
    expect(r.set.get('couchbase_security_allow_non_local_ca_upload')).toBe(0);
  });

  it('answers trustedCAs without credentials with the limited view', async () => {
    const res = await fetch(`${env.url}/pools/default/trustedCAs`);
    expect(res.status).toBe(200);
    const cas = (await res.json()) as Array<Record<string, unknown>>;
    for (const ca of cas) expect(Object.keys(ca).sort()).toEqual(['id', 'notAfter', 'notBefore', 'pem', 'subject']);
  });

  it('the deprecated root certificate call answers 400 on a 7.1+ cluster', async () => {
    const auth = `Basic ${Buffer.from('Administrator:password').toString('base64')}`;
    const res = await fetch(`${env.url}/pools/default/certificate?extended=true`, { headers: { authorization: auth } });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('deprecated, please use /pools/default/trustedCAs');
  });
});

describe('simulator certificates: other users, versions and scenarios', () => {
  it('a low-privilege user gets the limited view and no node certificates; the collector still succeeds', async () => {
    const env = await started({}, 'limited');
    try {
      const r = await collect(certificatesCollector, env.client);
      expect(r.ok, String(r.error)).toBe(true);
      expect(r.skipped.get('forbidden')).toBe(env.sim.ctx.nodes.length + 1);
      expect(r.set.get('couchbase_trusted_ca_not_after_timestamp_seconds', { id: '1' })).toBe(simCertificates(env.sim.ctx).root.notAfter.getTime() / 1000);
      expect(r.set.all('couchbase_trusted_ca_warnings')).toEqual([]);
      expect(r.set.all('couchbase_node_certificate_not_after_timestamp_seconds')).toEqual([]);
    } finally {
      await env.close();
    }
  });

  it('pre-7.1 mode: trustedCAs 404, the collector falls back to the extended root certificate', async () => {
    const env = await started({ knobs: { preTrustedCAs: true } });
    try {
      const r = await collect(certificatesCollector, env.client);
      expect(r.ok, String(r.error)).toBe(true);
      const root = simCertificates(env.sim.ctx).root;
      expect(r.set.get('couchbase_trusted_ca_not_after_timestamp_seconds', { id: 'legacy', subject: 'O=cbsim, CN=cbsim Root CA' })).toBe(root.notAfter.getTime() / 1000);
      expect(r.set.get('couchbase_trusted_ca_not_before_timestamp_seconds', { id: 'legacy' })).toBe(root.notBefore.getTime() / 1000);
      expect(r.set.all('couchbase_node_certificate_not_after_timestamp_seconds').every((s) => s.labels.origin === 'unknown')).toBe(true);
      expect(r.set.all('couchbase_security_allow_non_local_ca_upload')).toEqual([]);
    } finally {
      await env.close();
    }
  });

  it('incident: the CA expires in 3 days; demo: in 20 days, the generated CA warns, a plain passphrase is registered', async () => {
    for (const [scenario, days] of [['incident', 3], ['demo', 20]] as const) {
      const env = await started({ scenario });
      try {
        const r = await collect(certificatesCollector, env.client);
        expect(r.ok).toBe(true);
        const notAfter = r.set.get('couchbase_trusted_ca_not_after_timestamp_seconds', { id: '1' }) as number;
        expect(notAfter).toBe(Math.floor(env.sim.ctx.startedAt / 1000 + days * DAY));
        expect(r.set.get('couchbase_trusted_ca_warnings', { id: '0' })).toBe(1);
        expect(r.set.get('couchbase_node_certificate_plain_passphrase', { node: 'cb2.cbsim.local:8091' })).toBe(1);
        expect(r.set.get('couchbase_node_certificate_plain_passphrase', { node: 'cb3.cbsim.local:8091' })).toBe(0);
      } finally {
        await env.close();
      }
    }
  });

  it('knobs set the CA and intermediate expiry', async () => {
    const env = await started({ knobs: { caExpiresInDays: 10, intermediateExpiresInDays: 5 } });
    try {
      const r = await collect(certificatesCollector, env.client);
      const t0 = env.sim.ctx.startedAt / 1000;
      expect(r.set.get('couchbase_trusted_ca_not_after_timestamp_seconds', { id: '1' })).toBe(Math.floor(t0 + 10 * DAY));
      for (const s of r.set.all('couchbase_node_certificate_earliest_not_after_timestamp_seconds')) expect(s.value).toBe(Math.floor(t0 + 5 * DAY));
    } finally {
      await env.close();
    }
  });
});

describe('simulator security settings against the collector', () => {
  it('default: hardened; demo: tlsv1.1 on query, LDAP unencrypted, UI over http; missing services skipped', async () => {
    const def = await started();
    const demo = await started({ scenario: 'demo' });
    try {
      const a = await collect(securityCollector, def.client);
      expect(a.ok, String(a.error)).toBe(true);
      expect(a.set.all('couchbase_security_tls_min_version').filter((s) => s.value === 1).every((s) => s.labels.version === 'tlsv1.2')).toBe(true);
      expect(a.set.get('couchbase_security_cluster_encryption_level', { level: 'all' })).toBe(1);
      expect(a.set.get('couchbase_ldap_encryption', { encryption: 'tls' })).toBe(1);
      expect(a.set.get('couchbase_security_ui_over_http_disabled')).toBe(1);
      expect(a.set.get('couchbase_index_aware_rebalance_disabled')).toBe(0);
      // No node runs analytics or eventing: their per-service routes answer 404.
      expect(a.skipped.get('service_not_available')).toBe(2);

      const b = await collect(securityCollector, demo.client);
      expect(b.ok, String(b.error)).toBe(true);
      expect(b.set.get('couchbase_security_tls_min_version', { service: 'query', version: 'tlsv1.1' })).toBe(1);
      expect(b.set.get('couchbase_ldap_encryption', { encryption: 'none' })).toBe(1);
      expect(b.set.get('couchbase_ldap_server_cert_validation')).toBe(0);
      expect(b.set.get('couchbase_security_ui_over_http_disabled')).toBe(0);
      expect(b.set.all('couchbase_security_cluster_encryption_level')).toEqual([]);
    } finally {
      await def.close();
      await demo.close();
    }
  });

  it('answers the bind password masked, and a POST changes the settings', async () => {
    const env = await started({ scenario: 'incident' });
    try {
      const auth = { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` };
      const ldap = (await (await fetch(`${env.url}/settings/ldap`, { headers: auth })).json()) as { bindPass: string };
      expect(ldap.bindPass).toBe('**********');
      expect(simSecurity(env.sim.ctx).ldap.bindPass).not.toBe('**********');
      const post = await fetch(`${env.url}/settings/security/query`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'tlsMinVersion=tlsv1.3' });
      expect(post.status).toBe(200);
      const bad = await fetch(`${env.url}/settings/security`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'tlsMinVersion=tlsv1.3' });
      expect(bad.status).toBe(400);
      const r = await collect(securityCollector, env.client);
      expect(r.set.get('couchbase_security_tls_min_version', { service: 'query', version: 'tlsv1.3' })).toBe(1);
      expect(r.set.get('couchbase_index_aware_rebalance_disabled')).toBe(1);
      const viewer = await fetch(`${env.url}/settings/ldap`, { headers: { authorization: `Basic ${Buffer.from('viewer:viewer-password').toString('base64')}` } });
      expect(viewer.status).toBe(403);
    } finally {
      await env.close();
    }
  });
});

describe('secrets in a whole run', () => {
  it('/metrics and every log line (trace) of a daemon run never show the LDAP bind password or the key passphrase', async () => {
    const h = await startHarness({ sim: { scenario: 'demo' } });
    try {
      await h.daemon.ready();
      await h.daemon.scheduler.pollAllOnce();
      // Also the forbidden path: the limited user's polls log which permission is missing.
      const bindPass = simSecurity(h.sim.ctx).ldap.bindPass;
      const passphrases = simCertificates(h.sim.ctx).nodes.flatMap((n) => (n.plainPassphrase !== undefined ? [n.plainPassphrase] : []));
      expect(bindPass.length).toBeGreaterThan(12);
      expect(passphrases).toHaveLength(1);
      const metrics = await h.metrics();
      // The run did read LDAP and the node certificates.
      expect(metrics).toContain('couchbase_ldap_authentication_enabled{couchbase_cluster="sim"} 1');
      expect(metrics).toContain('couchbase_node_certificate_plain_passphrase{couchbase_cluster="sim",node="cb2.cbsim.local:8091"} 1');
      expect(metrics).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="security"} 1');
      expect(metrics).toContain('cbwatch_collector_success{couchbase_cluster="sim",collector="certificates"} 1');
      const logs = h.logs.join('');
      expect(logs.length).toBeGreaterThan(0);
      for (const secret of [bindPass, ...passphrases]) {
        expect(metrics).not.toContain(secret);
        expect(logs).not.toContain(secret);
      }
    } finally {
      await h.close();
    }
  });
});

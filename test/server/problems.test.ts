/**
 * The landing page's "Needs a look": hand-built samples at the thresholds (certificate 28 and 7 days,
 * auto-failover budget, quota 85%), and the demo scenario's documented problems (src/simulator/modules/*:
 * CA expiring in 20 days, a failed-over node, a paused and a failing replication, a slow search query)
 * reaching the page of a real daemon polling the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { SampleSet, defineFamily } from '../../src/metrics/family.js';
import { landingPage } from '../../src/server/landing.js';
import { findProblems } from '../../src/metrics/problems.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { startQuietDaemon } from '../helpers/daemon.js';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const DAY = 86400;
const ca = defineFamily('t', 'couchbase_trusted_ca_not_after_timestamp_seconds', 'gauge', 'h', ['id', 'subject'], 'timestamp_seconds');
const events = defineFamily('t', 'couchbase_autofailover_events', 'gauge', 'h', [], 'count');
const maxEvents = defineFamily('t', 'couchbase_autofailover_max_events', 'gauge', 'h', [], 'count');
const quota = defineFamily('t', 'couchbase_bucket_quota_used_ratio', 'gauge', 'h', ['bucket'], 'ratio');
const status = defineFamily('t', 'couchbase_node_status', 'gauge', 'h', ['node', 'status']);

describe('findProblems at the thresholds', () => {
  const set = new SampleSet();
  set.add(ca, { id: '1', subject: 'CN=fine' }, NOW / 1000 + 29 * DAY);
  set.add(ca, { id: '2', subject: 'CN=soon' }, NOW / 1000 + 27 * DAY);
  set.add(ca, { id: '3', subject: 'CN=urgent' }, NOW / 1000 + 6 * DAY);
  set.add(events, {}, 3);
  set.add(maxEvents, {}, 3);
  set.add(quota, { bucket: 'a' }, 0.84);
  set.add(quota, { bucket: 'b' }, 0.86);
  set.add(status, { node: 'n1:8091', status: 'healthy' }, 1);
  set.add(status, { node: 'n1:8091', status: 'unhealthy' }, 0);
  set.add(status, { node: 'n2:8091', status: 'healthy' }, 0);
  set.add(status, { node: 'n2:8091', status: 'unhealthy' }, 1);
  const problems = findProblems([{ base: { couchbase_cluster: 'c1' }, set }], NOW);
  const texts = problems.map((p) => `${p.severity} ${p.text}`);

  it('certificates: nothing at 29 days, a warning at 27, critical at 6', () => {
    expect(texts).toContain('warning trusted CA CN=soon expires in 27 days');
    expect(texts).toContain('critical trusted CA CN=urgent expires in 6 days');
    expect(texts.join('\n')).not.toContain('CN=fine');
  });

  it('auto-failover budget used up, quota at 86% but not 84%, the unhealthy node only', () => {
    expect(texts).toContain('critical auto-failover budget used up (3 of 3): no further automatic failover');
    expect(texts).toContain('warning bucket b uses 86% of its RAM quota');
    expect(texts.join('\n')).not.toContain('bucket a ');
    expect(texts).toContain('critical node n2:8091 is unhealthy');
    expect(texts.join('\n')).not.toContain('n1:8091');
  });

  it('sorts critical first, and the page escapes what it shows', () => {
    expect(problems[0]?.severity).toBe('critical');
    const page = landingPage({ version: 'x', statuses: [], clusters: [], webhooks: false, now: NOW, problems: [{ cluster: '<c>', severity: 'info', text: 'a <b>' }] });
    expect(page).toContain('&lt;c&gt;: a &lt;b&gt;');
    expect(landingPage({ version: 'x', statuses: [], clusters: [], webhooks: false, now: NOW, problems: [] })).toContain('Nothing in the latest polls.');
  });
});

describe('findProblems: the items of the alerts the demo fires', () => {
  const g = (name: string, labels: string[] = []) => defineFamily('t', name, 'gauge', 'h', labels);
  const texts = (set: SampleSet): string[] => findProblems([{ base: { couchbase_cluster: 'c1' }, set }], NOW).map((p) => `${p.alert ?? ''}: ${p.text}`);

  it('LDAP insecure only while LDAP is in use (authentication or authorization), as CouchbaseLdapInsecure', () => {
    const insecure = (authn: number, authz: number): SampleSet => {
      const set = new SampleSet();
      set.add(g('couchbase_ldap_authentication_enabled'), {}, authn);
      set.add(g('couchbase_ldap_authorization_enabled'), {}, authz);
      set.add(g('couchbase_ldap_encryption', ['encryption']), { encryption: 'none' }, 1);
      set.add(g('couchbase_ldap_encryption', ['encryption']), { encryption: 'tls' }, 0);
      set.add(g('couchbase_ldap_server_cert_validation'), {}, 0);
      return set;
    };
    expect(texts(insecure(0, 0))).toEqual([]);
    const expected = [
      "CouchbaseLdapInsecure: LDAP is in use and its connection to the LDAP servers is not encrypted",
      "CouchbaseLdapInsecure: LDAP is in use and the LDAP servers' certificates are not validated",
    ];
    expect(texts(insecure(1, 0))).toEqual(expected);
    expect(texts(insecure(0, 1))).toEqual(expected);
    const secure = new SampleSet();
    secure.add(g('couchbase_ldap_authentication_enabled'), {}, 1);
    secure.add(g('couchbase_ldap_encryption', ['encryption']), { encryption: 'tls' }, 1);
    secure.add(g('couchbase_ldap_server_cert_validation'), {}, 1);
    expect(texts(secure)).toEqual([]);
  });

  it('certificate warnings above 0, and memory above 98% of the high-water mark but not at 97%', () => {
    const set = new SampleSet();
    set.add(g('couchbase_trusted_ca_warnings', ['id', 'subject']), { id: '1', subject: 'CN=ok' }, 0);
    set.add(g('couchbase_trusted_ca_warnings', ['id', 'subject']), { id: '2', subject: 'CN=self' }, 1);
    set.add(g('couchbase_node_certificate_warnings', ['node']), { node: 'n1:8091' }, 2);
    set.add(g('couchbase_bucket_mem_used_bytes', ['bucket']), { bucket: 'a' }, 97);
    set.add(g('couchbase_bucket_ep_mem_high_wat_bytes', ['bucket']), { bucket: 'a' }, 100);
    set.add(g('couchbase_bucket_mem_used_bytes', ['bucket']), { bucket: 'b' }, 99);
    set.add(g('couchbase_bucket_ep_mem_high_wat_bytes', ['bucket']), { bucket: 'b' }, 100);
    expect(texts(set)).toEqual([
      'CouchbaseBucketMemoryNearHighWaterMark: bucket b uses 99% of its memory high-water mark',
      'CouchbaseCertificateWarnings: certificate of node n1:8091: Couchbase reports 2 warning(s) about it',
      'CouchbaseCertificateWarnings: trusted CA CN=self: Couchbase reports 1 warning(s) about it',
    ]);
  });
});

describe('the demo scenario on the landing page of a real daemon', () => {
  let sim: Simulator | undefined;
  let daemon: Daemon | undefined;
  beforeAll(async () => {
    sim = createSimulator({ scenario: 'demo' });
    daemon = await startQuietDaemon(sim, 'demo');
  }, 30_000);
  afterAll(async () => {
    await daemon?.close();
    await sim?.close();
  });

  it('lists the scenario\'s problems under "Needs a look"', async () => {
    const page = await (await fetch(`${daemon?.url}/`)).text();
    const section = page.slice(page.indexOf('Needs a look'), page.indexOf('<h2>Collectors'));
    expect(section).toMatch(/warning<\/b> demo: trusted CA .* expires in (19|20) days/);
    expect(section).toMatch(/was failed over: a rebalance is needed/);
    expect(section).toMatch(/XDCR .* is paused/);
    expect(section).toMatch(/XDCR .*: \d+ error\(s\)/);
    expect(section).toMatch(/search index travel-hotels: 1 slow query running/);
    expect(section).toMatch(/TLS minimum version of \w+ is tlsv1\.1/);
    // Never a secret on the page.
    expect(page).not.toContain(sim?.ctx.options.users.admin.password as string);
  });
});

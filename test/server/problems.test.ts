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
import { findProblems } from '../../src/server/problems.js';
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

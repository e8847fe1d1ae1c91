/**
 * Where Search and Backup are looked for, and so where the Couchbase credentials go (issue 25, item 7):
 * `credentials_hosts: nodes` (default) follows nodeServices to any node; `configured` only to the hosts of
 * `url`, `search_url` and `backup_url`. nodeServices answers hand-written after the reference's shape.
 */
import { describe, expect, it } from 'vitest';
import { allowedCredentialHosts, nodeServicesSchema, serviceUrl } from '../../src/couchbase/nodeServices.js';
import { CbwError } from '../../src/errors.js';
import { backupCollector } from '../../src/collectors/backup.js';
import { searchCollector } from '../../src/collectors/search.js';
import { collect, fakeClient } from '../helpers/collect.js';
import { loadConfig } from '../../src/config/load.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The node answering (thisNode) runs only kv; Search and Backup run on another node.
const elsewhere = nodeServicesSchema.parse({
  rev: 1,
  nodesExt: [
    { services: { mgmt: 8091, mgmtSSL: 18091, kv: 11210 }, thisNode: true, hostname: '10.0.0.1' },
    { services: { mgmt: 8091, mgmtSSL: 18091, fts: 8094, ftsSSL: 18094, backupAPI: 8097, backupAPIHTTPS: 18097 }, hostname: 'evil.example' },
  ],
});
const onThisNode = nodeServicesSchema.parse({
  rev: 1,
  nodesExt: [{ services: { mgmt: 8091, fts: 8094 }, thisNode: true, hostname: '10.0.0.1' }, { services: { fts: 8094 }, hostname: 'other.example' }],
});

describe('serviceUrl with credentials_hosts', () => {
  it('nodes (the default): whatever node nodeServices advertises, over the management URL\'s scheme', () => {
    expect(serviceUrl(elsewhere, 'http://cb1.example:8091', 'fts', 'ftsSSL')).toBe('http://evil.example:8094');
    expect(serviceUrl(elsewhere, 'https://cb1.example:18091', 'backupAPI', 'backupAPIHTTPS')).toBe('https://evil.example:18097');
  });

  it('configured: only the configured hosts; a service found only elsewhere is a failure naming the key', () => {
    const allowed = allowedCredentialHosts({ url: 'http://cb1.example:8091', searchUrl: undefined, backupUrl: undefined });
    let thrown: unknown;
    try {
      serviceUrl(elsewhere, 'http://cb1.example:8091', 'fts', 'ftsSSL', allowed);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(CbwError);
    expect((thrown as CbwError).code).toBe('CBW_ERR_CONFIG');
    expect((thrown as Error).message).toContain('credentials_hosts');
    // The upstream host name is not echoed.
    expect((thrown as Error).message).not.toContain('evil.example');
    // The node answering the configured URL is the configured host.
    expect(serviceUrl(onThisNode, 'http://cb1.example:8091', 'fts', 'ftsSSL', allowed)).toBe('http://cb1.example:8094');
    // A host named in search_url or backup_url is a configured host too (case does not matter).
    const withBackupHost = allowedCredentialHosts({ url: 'http://cb1.example:8091', searchUrl: undefined, backupUrl: 'http://Evil.Example:8097' });
    expect(serviceUrl(elsewhere, 'http://cb1.example:8091', 'fts', 'ftsSSL', withBackupHost)).toBe('http://evil.example:8094');
  });

  it('no service anywhere is still "not applicable", not a failure', () => {
    const none = nodeServicesSchema.parse({ nodesExt: [{ services: { kv: 11210 }, thisNode: true }] });
    expect(serviceUrl(none, 'http://cb1.example:8091', 'fts', 'ftsSSL', new Set(['cb1.example']))).toBeUndefined();
  });
});

describe('credentials_hosts in the configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-credhosts-'));
  const load = (extra: string) => {
    const f = join(dir, `c-${Math.random().toString(36).slice(2)}.yml`);
    writeFileSync(f, `clusters:\n  - name: a\n    url: http://cb1.example:8091\n    username: u\n    password_env: CBW_TEST_PW\n${extra}`);
    return loadConfig({ config: f }, { CBW_TEST_PW: 'pw' });
  };
  it('defaults to nodes; configured is accepted; anything else is an error naming the key', () => {
    expect(load('').clusters[0]?.credentialsHosts).toBe('nodes');
    expect(load('    credentials_hosts: configured\n').clusters[0]?.credentialsHosts).toBe('configured');
    expect(() => load('    credentials_hosts: everywhere\n')).toThrow(/credentials_hosts/);
  });
});

describe('the search and backup collectors under credentials_hosts: configured', () => {
  const routes = { '/pools/default/nodeServices': elsewhere };
  it('search and backup on another node: each collector fails, and nothing is asked of that node', async () => {
    for (const collector of [searchCollector, backupCollector] as const) {
      const client = fakeClient(routes);
      const r = await collect(collector as typeof searchCollector, client, { cluster: { credentialsHosts: 'configured' } });
      expect(r.ok).toBe(false);
      expect((r.error as CbwError).code).toBe('CBW_ERR_CONFIG');
      expect(client.calls.map((c) => c.route)).toEqual(['/pools/default/nodeServices']);
    }
  });

  it('by default (nodes) they follow nodeServices to the other node', async () => {
    const client = fakeClient(routes);
    await collect(searchCollector, client);
    expect(client.calls[1]?.options.baseUrl).toBe('http://evil.example:8094');
  });
});

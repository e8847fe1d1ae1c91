import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_INTERVALS } from '../../src/config/defaults.js';
import { parseArgs } from '../../src/config/flags.js';
import { describeConfig, loadConfig, nameFromUrl, parseListenAddress } from '../../src/config/load.js';
import { COLLECTOR_NAMES } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'cbwatch-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const SECRET_FILE_PW = 'file-secret-Qx7';
const SECRET_ENV_PW = 'env-secret-Zp3';
const SECRET_TOKEN = 'sg-token-0123456789abcdef';
write('cb-password', `${SECRET_FILE_PW}\n`);
write('sg-token', `${SECRET_TOKEN}\r\n`);

function load(argv: string[], env: Record<string, string> = {}) {
  return loadConfig(parseArgs(argv).flags, env);
}

describe('single-cluster shortcut and defaults', () => {
  it('builds one cluster from --couchbase.url with every default', () => {
    const c = load(['--couchbase.url', 'http://cb1.example.com:8091/', '--couchbase.username', 'cbwatch'], {
      CBWATCH_COUCHBASE_PASSWORD: SECRET_ENV_PW,
    });
    expect(c.file).toBeUndefined();
    expect(c.clusters).toHaveLength(1);
    const cl = c.clusters[0]!;
    expect(cl.name).toBe('cb1.example.com');
    expect(cl.url).toBe('http://cb1.example.com:8091');
    expect(cl.username).toBe('cbwatch');
    expect(cl.password).toBe(SECRET_ENV_PW);
    expect(cl.passwordSource).toBe('environment variable CBWATCH_COUCHBASE_PASSWORD');
    expect(cl.tls).toEqual({ insecureSkipVerify: false });
    expect(cl.searchUrl).toBeUndefined();
    expect(cl.backupUrl).toBeUndefined();
    expect(cl.concurrency).toBe(8);
    expect(cl.connectTimeout).toBe(5000);
    expect(cl.requestTimeout).toBe(10_000);
    expect(cl.maxResponseBytes).toBe(64 * 1024 * 1024);
    for (const n of COLLECTOR_NAMES) {
      expect(cl.collectors[n].enabled, n).toBe(true);
      expect(cl.collectors[n].interval, n).toBe(DEFAULT_INTERVALS[n]);
      expect(cl.collectors[n].timeout, n).toBeLessThanOrEqual(cl.collectors[n].interval);
    }
    expect(cl.collectors.search.slow_query_threshold).toBe(10_000);
    expect(cl.collectors.search.cancel).toEqual({ enabled: false, longer_than: 300_000, indexes: [], dry_run: true, log_query_text: false });
    expect(cl.collectors.bucket_stats.per_node).toBe(false);
    expect(cl.collectors.bucket_stats.hot_keys).toBe(0);
    expect(c.web).toEqual({ listenHost: '', listenPort: 9420, configFile: undefined, settings: undefined, maxRequests: 40, telemetryPath: '/metrics' });
    expect(c.log).toEqual({ level: 'info', format: 'json' });
    expect(c.webhooks.syncGateway).toBeUndefined();
  });

  it('takes the whole shortcut from the environment, including a password file and TLS', () => {
    const ca = write('ca.pem', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const c = loadConfig({}, {
      CBWATCH_COUCHBASE_URL: 'https://cb2.example.com:18091',
      CBWATCH_COUCHBASE_USERNAME: 'viewer',
      CBWATCH_COUCHBASE_PASSWORD_FILE: join(dir, 'cb-password'),
      CBWATCH_COUCHBASE_CLUSTER_NAME: 'eu-2',
      CBWATCH_COUCHBASE_CA_FILE: ca,
      CBWATCH_COUCHBASE_INSECURE_SKIP_VERIFY: 'false',
      CBWATCH_WEB_LISTEN_ADDRESS: '[::1]:9999',
      CBWATCH_LOG_LEVEL: 'debug',
      CBWATCH_LOG_FORMAT: 'logfmt',
    });
    const cl = c.clusters[0]!;
    expect(cl).toMatchObject({ name: 'eu-2', url: 'https://cb2.example.com:18091', username: 'viewer', password: SECRET_FILE_PW });
    expect(cl.tls).toEqual({ caFile: ca, insecureSkipVerify: false });
    expect(c.web).toMatchObject({ listenHost: '::1', listenPort: 9999 });
    expect(c.log).toEqual({ level: 'debug', format: 'logfmt' });
  });

  it('treats empty environment variables as unset', () => {
    const c = loadConfig({ 'couchbase.url': 'http://cb1:8091' }, { CBWATCH_COUCHBASE_USERNAME: '', CBWATCH_LOG_LEVEL: '', CBWATCH_COUCHBASE_PASSWORD: '' });
    expect(c.clusters[0]!.username).toBeUndefined();
    expect(c.clusters[0]!.password).toBeUndefined();
    expect(c.log.level).toBe('info');
  });

  it('allows a configuration without clusters only when asked', () => {
    expect(() => loadConfig({}, {})).toThrow(ConfigError);
    expect(loadConfig({}, {}, { allowNoClusters: true }).clusters).toEqual([]);
  });

  it('names a cluster after its URL host, without port or brackets', () => {
    expect(nameFromUrl('https://cb1.example.com:18091')).toBe('cb1.example.com');
    expect(nameFromUrl('http://[::1]:8091')).toBe('::1');
    expect(nameFromUrl('http://10.0.0.5')).toBe('10.0.0.5');
  });
});

describe('precedence: flags > environment > file', () => {
  const file = write(
    'one.yml',
    [
      'clusters:',
      '  - name: from-file',
      '    url: http://cb1.example.com:8091',
      '    username: file-user',
      '    password_env: FILE_PW',
      '    tls: { insecure_skip_verify: false }',
    ].join('\n'),
  );
  const env = {
    FILE_PW: 'file-env-pw',
    CBWATCH_COUCHBASE_USERNAME: 'env-user',
    CBWATCH_COUCHBASE_CLUSTER_NAME: 'env-name',
    CBWATCH_LOG_LEVEL: 'debug',
    CBWATCH_LOG_FORMAT: 'logfmt',
    CBWATCH_WEB_LISTEN_ADDRESS: '127.0.0.1:9000',
  };

  it('file values when nothing overrides them', () => {
    const c = load(['--config', file], { FILE_PW: 'file-env-pw' });
    expect(c.clusters[0]).toMatchObject({ name: 'from-file', username: 'file-user', password: 'file-env-pw' });
    expect(c.clusters[0]!.passwordSource).toBe('environment variable FILE_PW');
    expect(c.file).toBe(file);
  });

  it('environment over file', () => {
    const c = load(['--config', file], env);
    expect(c.clusters[0]).toMatchObject({ name: 'env-name', username: 'env-user', password: 'file-env-pw' });
    expect(c.log).toEqual({ level: 'debug', format: 'logfmt' });
    expect(c.web).toMatchObject({ listenHost: '127.0.0.1', listenPort: 9000 });
  });

  it('flags over environment', () => {
    const c = load(
      [
        '--config',
        file,
        '--couchbase.username',
        'flag-user',
        '--couchbase.cluster-name',
        'flag-name',
        '--log.level',
        'warn',
        '--web.listen-address',
        ':9421',
        '--couchbase.insecure-skip-verify',
      ],
      { ...env, CBWATCH_COUCHBASE_INSECURE_SKIP_VERIFY: 'false' },
    );
    expect(c.clusters[0]).toMatchObject({ name: 'flag-name', username: 'flag-user' });
    expect(c.clusters[0]!.tls.insecureSkipVerify).toBe(true);
    expect(c.log).toEqual({ level: 'warn', format: 'logfmt' });
    expect(c.web).toMatchObject({ listenHost: '', listenPort: 9421 });
  });

  it('password: --couchbase.password-file over CBWATCH_COUCHBASE_PASSWORD over the file', () => {
    expect(load(['--config', file], { ...env, CBWATCH_COUCHBASE_PASSWORD: SECRET_ENV_PW }).clusters[0]!.password).toBe(SECRET_ENV_PW);
    const c = load(['--config', file, '--couchbase.password-file', join(dir, 'cb-password')], {
      ...env,
      CBWATCH_COUCHBASE_PASSWORD: SECRET_ENV_PW,
    });
    expect(c.clusters[0]!.password).toBe(SECRET_FILE_PW);
    expect(c.clusters[0]!.passwordSource).toBe(`file ${join(dir, 'cb-password')}`);
  });

  it('an overridden password source is not read at all', () => {
    // FILE_PW is missing, which would be an error, but the environment's password wins.
    const c = load(['--config', file], { CBWATCH_COUCHBASE_PASSWORD: SECRET_ENV_PW });
    expect(c.clusters[0]!.password).toBe(SECRET_ENV_PW);
  });

  it('CBWATCH_CONFIG names the file when --config is absent, and --config wins over it', () => {
    expect(loadConfig({}, { CBWATCH_CONFIG: file, FILE_PW: 'x' }).clusters[0]!.name).toBe('from-file');
    const other = write('other.yml', 'clusters:\n  - name: other\n    url: http://cb7:8091\n');
    expect(loadConfig({ config: other }, { CBWATCH_CONFIG: file }).clusters[0]!.name).toBe('other');
  });
});

describe('a multi-cluster file', () => {
  const file = write(
    'multi.yml',
    `# two clusters, secrets from a file (relative to this file) and from the environment
clusters:
  - name: prod-eu
    url: https://cb1.example.com:18091
    username: cbwatch
    password_file: cb-password
    search_url: https://cb1.example.com:18094/
    concurrency: 4
    connect_timeout: 2s
    request_timeout: 1m
    max_response_bytes: 16MiB
    collectors:
      bucket_stats: { interval: 1m, per_node: true, hot_keys: 5 }
      search:
        interval: 15s
        slow_query_threshold: 2.5s
        cancel: { enabled: true, longer_than: 10m, dry_run: false }
      certificates: { interval: 1h, timeout: 30s }
      backup: { enabled: false }
      xdcr: { slow_stats_interval: 5m, fast_stats: [changes_left, rate_replicated, num_failedckpts] }
  - name: prod-us
    url: http://cb9.example.com:8091
    username: cbwatch
    password_env: US_PW
    collectors:
      nodes: { interval: 10 }
webhooks:
  sync_gateway:
    enabled: true
    token_file: sg-token
    databases: [travel, inventory]
    type_field: type
`,
  );
  const config = load(['--config', file], { US_PW: SECRET_ENV_PW });

  it('loads both clusters with their options, durations and sizes parsed', () => {
    expect(config.clusters.map((c) => c.name)).toEqual(['prod-eu', 'prod-us']);
    const eu = config.clusters[0]!;
    expect(eu.password).toBe(SECRET_FILE_PW);
    expect(eu.passwordSource).toBe(`file ${join(dir, 'cb-password')}`);
    expect(eu.searchUrl).toBe('https://cb1.example.com:18094');
    expect(eu).toMatchObject({ concurrency: 4, connectTimeout: 2000, requestTimeout: 60_000, maxResponseBytes: 16 * 1024 * 1024 });
    expect(eu.collectors.bucket_stats).toMatchObject({ interval: 60_000, per_node: true, hot_keys: 5, enabled: true });
    expect(eu.collectors.search).toMatchObject({ interval: 15_000, slow_query_threshold: 2500 });
    expect(eu.collectors.search.cancel).toEqual({ enabled: true, longer_than: 600_000, indexes: [], dry_run: false, log_query_text: false });
    expect(eu.collectors.certificates).toMatchObject({ interval: 3_600_000, timeout: 30_000 });
    expect(eu.collectors.backup.enabled).toBe(false);
    expect(eu.collectors.xdcr.interval).toBe(DEFAULT_INTERVALS.xdcr);
    expect(eu.collectors.xdcr).toMatchObject({ slow_stats_interval: 300_000, fast_stats: ['changes_left', 'rate_replicated', 'num_failedckpts'] });
    const us = config.clusters[1]!;
    // Defaults: the alerts', the XDCR dashboard first row's and the graphed rates' stats every poll, the others every 4 minutes.
    expect(us.collectors.xdcr).toMatchObject({ slow_stats_interval: 240_000, fast_stats: ['bandwidth_usage', 'changes_left', 'docs_rep_queue', 'rate_replicated'] });
    expect(us.password).toBe(SECRET_ENV_PW);
    expect(us.collectors.nodes.interval).toBe(10_000);
  });

  it('reads the webhook token from its file (trailing newline trimmed) and drops the file keys', () => {
    const sg = config.webhooks.syncGateway!;
    expect(sg.token).toBe(SECRET_TOKEN);
    expect(sg.databases).toEqual(['travel', 'inventory']);
    expect(sg.type_field).toBe('type');
    expect(sg.max_body_bytes).toBe(1024 * 1024);
    expect(sg).not.toHaveProperty('token_file');
  });

  it('describeConfig summarises without any secret', () => {
    const text = describeConfig(config);
    expect(text).toContain(`configuration: ${file}`);
    expect(text).toContain('prod-eu  (couchbase_cluster="prod-eu")');
    expect(text).toContain('url:         https://cb1.example.com:18091');
    expect(text).toContain(`password:    set, from file ${join(dir, 'cb-password')}`);
    expect(text).toContain('password:    set, from environment variable US_PW');
    expect(text).toMatch(/bucket_stats\s+every 1m, timeout \S+; per_node=true, hot_keys=5/);
    expect(text).toMatch(/search\s+every 15s, timeout \S+; slow_query_threshold=2.5s, cancel.enabled=true, cancel.longer_than=10m, cancel.dry_run=false/);
    expect(text).toMatch(/xdcr\s+every 30s, timeout \S+; slow_stats_interval=5m, fast_stats=\[changes_left,rate_replicated,num_failedckpts\]/);
    expect(text).toContain('disabled:    backup');
    expect(text).toContain('webhooks.sync_gateway: on (token set; databases: travel, inventory');
    expect(text).toContain('web: listen :9420 (every interface, IPv6 and IPv4)');
    for (const secret of [SECRET_FILE_PW, SECRET_ENV_PW, SECRET_TOKEN]) expect(text).not.toContain(secret);
  });

  it('refuses a shortcut setting that cannot apply to one of several clusters', () => {
    expect(() => load(['--config', file, '--couchbase.cluster-name', 'x'], { US_PW: 'p' })).toThrow(/applies to a single cluster/);
  });
});

describe('parseListenAddress', () => {
  it.each([
    [':9420', '', 9420],
    ['0.0.0.0:9420', '0.0.0.0', 9420],
    ['127.0.0.1:0', '127.0.0.1', 0],
    ['localhost:9420', 'localhost', 9420],
    ['[::1]:9420', '::1', 9420],
    ['[::]:9420', '::', 9420],
  ])('%s', (text, host, port) => {
    expect(parseListenAddress(text)).toEqual({ host, port });
  });

  it.each(['9420', '::1:9420', 'host:', 'host:port', ':65536', '[::1]', 'a b:1'])('rejects %j', (text) => {
    expect(() => parseListenAddress(text)).toThrow(ConfigError);
    expect(() => parseListenAddress(text)).toThrow(/--web.listen-address/);
  });
});

describe('--shard', () => {
  it('splits clusters over replicas: every cluster in exactly one shard', async () => {
    const { loadConfig, parseShard, shardOf } = await import('../../src/config/load.js');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'cbwatch-shard-'));
    const names = Array.from({ length: 12 }, (_, i) => `cluster-${i}`);
    const file = join(dir, 'c.yml');
    writeFileSync(file, `clusters:\n${names.map((n, i) => `  - name: ${n}\n    url: http://h${i}:8091\n`).join('')}`);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = loadConfig({ config: file, shard: `${i}/3` }, {});
      for (const cl of c.clusters) expect(shardOf(cl.name, 3)).toBe(i);
      seen.push(...c.clusters.map((cl) => cl.name));
    }
    expect(seen.sort()).toEqual([...names].sort());
    expect(parseShard('2/5')).toEqual({ index: 2, total: 5 });
    expect(() => parseShard('3/3')).toThrow(/0 <= I < N/);
    expect(() => loadConfig({ config: file, shard: 'x' }, {})).toThrow(/--shard: "x" is not a shard/);
  });
});

describe('several problems', () => {
  it('are listed together in file order', () => {
    const file = write(
      'two-problems.yml',
      [
        'clusters:',
        '  - name: a',
        '    url: http://a:8091',
        '    usernme: x',
        '    collectors:',
        '      search: { slow_query_threshold: 10x }',
        '',
      ].join('\n'),
    );
    let message = '';
    try {
      load(['--config', file]);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toMatch(/2 problems/);
    const lines = message.split('\n').slice(1);
    expect(lines[0]).toContain(':4:');
    expect(lines[0]).toContain('usernme');
    expect(lines[1]).toContain(':6:');
    expect(lines[1]).toContain('slow_query_threshold');
  });
});

describe('--couchbase.max-answer-values', () => {
  const base = ['--couchbase.url', 'http://cb1:8091'];
  it('defaults to 4,000,000; the flag, then the environment, set it', () => {
    expect(load(base).maxAnswerValues).toBe(4_000_000);
    expect(load([...base, '--couchbase.max-answer-values', '500000']).maxAnswerValues).toBe(500_000);
    expect(load(base, { CBWATCH_COUCHBASE_MAX_ANSWER_VALUES: '20000' }).maxAnswerValues).toBe(20_000);
    expect(load([...base, '--couchbase.max-answer-values', '30000'], { CBWATCH_COUCHBASE_MAX_ANSWER_VALUES: '20000' }).maxAnswerValues).toBe(30_000);
  });
  it('refuses a value that is not a whole number of at least 10,000, naming the key', () => {
    for (const bad of ['abc', '12.5', '9999', '4MiB']) {
      expect(() => load([...base, '--couchbase.max-answer-values', bad])).toThrow(/--couchbase\.max-answer-values: expected a whole number of at least 10000/);
    }
    expect(() => load(base, { CBWATCH_COUCHBASE_MAX_ANSWER_VALUES: 'lots' })).toThrow(/CBWATCH_COUCHBASE_MAX_ANSWER_VALUES/);
  });
});

describe('--collection.gc-every', () => {
  const base = ['--couchbase.url', 'http://cb1:8091'];
  it('is left to the default (8 MiB, in the worker) unless set; 0 turns it off; the flag, then the environment, set it (sizes or bytes)', () => {
    expect(load(base).gcEveryAnswerBytes).toBeUndefined();
    expect(load([...base, '--collection.gc-every', '0']).gcEveryAnswerBytes).toBe(0);
    expect(load(base, { CBWATCH_COLLECTION_GC_EVERY: '0' }).gcEveryAnswerBytes).toBe(0);
    expect(load([...base, '--collection.gc-every', '8MiB']).gcEveryAnswerBytes).toBe(8 * 1024 * 1024);
    expect(load(base, { CBWATCH_COLLECTION_GC_EVERY: '2097152' }).gcEveryAnswerBytes).toBe(2 * 1024 * 1024);
    // The floor is exactly 1 MiB.
    expect(load([...base, '--collection.gc-every', '1MiB']).gcEveryAnswerBytes).toBe(1048576);
    expect(load([...base, '--collection.gc-every', '1048576']).gcEveryAnswerBytes).toBe(1048576);
    expect(load([...base, '--collection.gc-every', '16MiB'], { CBWATCH_COLLECTION_GC_EVERY: '4MiB' }).gcEveryAnswerBytes).toBe(16 * 1024 * 1024);
  });
  it('refuses anything but 0 or a size from 1 MiB to 64 GiB, naming the key', () => {
    for (const bad of ['lots', '512KiB', '1000', '1MB', '1048575', '8 MiB per poll', '65GiB', '68719476737', '99999999999999999999999GiB']) {
      expect(() => load([...base, '--collection.gc-every', bad])).toThrow(/--collection\.gc-every: expected 0 \(off\) or a size from 1MiB to 64GiB/);
    }
    // 64 GiB itself is the largest accepted.
    expect(load([...base, '--collection.gc-every', '64GiB']).gcEveryAnswerBytes).toBe(68_719_476_736);
    expect(() => load(base, { CBWATCH_COLLECTION_GC_EVERY: '8 lots' })).toThrow(/CBWATCH_COLLECTION_GC_EVERY/);
  });
});

describe('$CREDENTIALS_DIRECTORY outside systemd', () => {
  const file = write('systemd.yml', 'clusters:\n  - name: a\n    url: http://cb1:8091\n    username: cbwatch\n    password_file: $CREDENTIALS_DIRECTORY/couchbase-password\n');

  it('unset: the error names the key and the path, and says how to check the file from a shell', () => {
    let err: unknown;
    try {
      loadConfig({ config: file }, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('password_file: cannot read "$CREDENTIALS_DIRECTORY/couchbase-password" (no such file)');
    expect(msg).toContain('set by systemd for the service only');
    expect(msg).toContain('CREDENTIALS_DIRECTORY=/etc/cbwatch cbwatch run --config /etc/cbwatch/cbwatch.yml --config.check');
  });

  it('set as the hint says: the file is read from that directory', () => {
    write('couchbase-password', `${SECRET_FILE_PW}\n`);
    const c = loadConfig({ config: file }, { CREDENTIALS_DIRECTORY: dir });
    expect(c.clusters[0]!.password).toBe(SECRET_FILE_PW);
  });
});

describe('--web.telemetry-path bounds (issue 39, item 7)', () => {
  it('takes a path of 256 characters and names with dots that are not whole segments', async () => {
    const { parseTelemetryPath } = await import('../../src/config/load.js');
    const longest = `/${'a'.repeat(255)}`;
    expect(parseTelemetryPath(longest)).toBe(longest);
    expect(parseTelemetryPath('/.well-known/metrics')).toBe('/.well-known/metrics');
    expect(parseTelemetryPath('/a..b/m.')).toBe('/a..b/m.');
  });
});

describe('clusters one process should carry (issue 39, item 5)', () => {
  const many = (n: number): string =>
    `clusters:\n${Array.from({ length: n }, (_, i) => `  - name: c${i}\n    url: http://cb${i}.example.com:8091\n`).join('')}`;
  it('--config.check warns past 250 clusters, with the advice to shard, and refuses nothing', async () => {
    const { describeConfig } = await import('../../src/config/load.js');
    const at = load(['--config', write('250.yml', many(250))]);
    expect(at.clusters).toHaveLength(250);
    expect(describeConfig(at)).not.toContain('warning:');
    const past = load(['--config', write('251.yml', many(251))]);
    expect(past.clusters).toHaveLength(251);
    expect(describeConfig(past)).toContain('  warning: more than 250 clusters, more than one process should carry (about 1 MB of memory each and their share of a core): shard them with --shard i/n');
  });
});

describe('nodes as written (issue 39, item 5)', () => {
  it('a file of more than 250,000 nodes is refused before it is parsed, naming the file', () => {
    // 250,001 scalars in one flow sequence: 500 KB (the parser would hold about 200 MB for it).
    const file = write('too-many-nodes.yml', `x: [${'1,'.repeat(250_000)}1]\n`);
    expect(() => load(['--config', file])).toThrow(`${file}: YAML error: more than 250000 nodes as written (a configuration of 1,000 clusters has about 30,000)`);
    // 250,000 as written is parsed (and then judged by the schema: x is not a key of the file).
    const at = write('at-limit.yml', `x: [${'1,'.repeat(249_997)}1]\n`);
    expect(() => load(['--config', at])).toThrow(/x: unknown key/);
  });
  it('a file over 4 MiB is refused before it is read', () => {
    const file = write('big.yml', `# ${'x'.repeat(4 * 1024 * 1024)}\nclusters: []\n`);
    expect(() => load(['--config', file])).toThrow(`--config: ${JSON.stringify(file)} is ${4 * 1024 * 1024 + 16} bytes, above the limit of 4194304 (4 MiB)`);
  });
});

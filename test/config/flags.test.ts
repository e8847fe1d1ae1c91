import { describe, expect, it } from 'vitest';
import { FLAG_NAMES, flagsHelp, parseArgs, usage } from '../../src/config/flags.js';
import { ConfigError } from '../../src/errors.js';

function fails(argv: string[]): ConfigError {
  try {
    parseArgs(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('CBW_ERR_CONFIG');
    return err as ConfigError;
  }
  throw new Error(`parseArgs(${JSON.stringify(argv)}) did not fail`);
}

describe('parseArgs: commands', () => {
  it.each([
    [[], 'run'],
    [['run'], 'run'],
    [['check'], 'check'],
    [['demo'], 'demo'],
    [['simulate'], 'simulate'],
    [['help'], 'help'],
    [['version'], 'version'],
    [['--help'], 'help'],
    [['-h'], 'help'],
    [['check', '--help'], 'help'],
    [['--version'], 'version'],
    [['simulate', '--version'], 'version'],
  ])('%j → %s', (argv, command) => {
    expect(parseArgs(argv).command).toBe(command);
  });

  it('rejects an unknown command and extra positionals', () => {
    expect(fails(['serve']).message).toContain('unknown command "serve"');
    expect(fails(['run', 'now']).message).toContain('unexpected argument "now"');
  });
});

describe('parseArgs: flags', () => {
  it('leaves every unset flag absent so the environment can decide', () => {
    expect(parseArgs([]).flags).toEqual({});
    expect(parseArgs(['check']).flags).toEqual({});
    expect(parseArgs(['--help']).flags).toEqual({ help: true });
  });

  // Each declared flag must reach the parsed flags under some command that takes it (--shard once did not).
  it.each(FLAG_NAMES.filter((n) => n !== 'help' && n !== 'version'))('--%s reaches the parsed flags', (name) => {
    const sample: Record<string, string> = {
      port: '1', 'prometheus.port': '1', 'alertmanager.port': '1', buckets: '1', nodes: '1', latency: '5', replications: '1', speed: '1', 'stat-set': 'full', 'server-version': '8.0.0',
      'log.level': 'info', 'log.format': 'json', shard: '0/2', 'web.max-requests': '10',
    };
    const booleans = ['config.check', 'couchbase.insecure-skip-verify', 'with-prometheus', 'web.enable-lifecycle', 'collection.inline'];
    const switchFlag = /^(no-)?collector\./.test(name);
    const argv = booleans.includes(name) || switchFlag ? [`--${name}`] : [`--${name}`, sample[name] ?? 'x'];
    const taken = (['run', 'check', 'demo', 'simulate'] as const).flatMap((cmd) => {
      try {
        return [parseArgs([cmd, ...argv]).flags];
      } catch {
        return [];
      }
    });
    expect(taken.length, `no command takes --${name}`).toBeGreaterThan(0);
    // --no-collector.X is recorded as collector.X = false.
    const key = name.replace(/^no-collector\./, 'collector.');
    for (const flags of taken) expect((flags as Record<string, unknown>)[key], `--${name}`).toBeDefined();
  });

  it('reads run flags, in both --flag value and --flag=value forms', () => {
    const { command, flags } = parseArgs([
      '--config=/etc/cbwatch.yml',
      '--config.check',
      '--web.listen-address',
      '[::1]:9420',
      '--web.config.file',
      'web.yml',
      '--log.level=debug',
      '--log.format',
      'logfmt',
      '--couchbase.url',
      'https://cb1:18091',
      '--couchbase.username',
      'cbwatch',
      '--couchbase.cluster-name',
      'prod',
      '--couchbase.password-file',
      '/run/secrets/cb',
      '--couchbase.ca-file',
      'ca.pem',
      '--couchbase.insecure-skip-verify',
    ]);
    expect(command).toBe('run');
    expect(flags).toEqual({
      config: '/etc/cbwatch.yml',
      'config.check': true,
      'web.listen-address': '[::1]:9420',
      'web.config.file': 'web.yml',
      'log.level': 'debug',
      'log.format': 'logfmt',
      'couchbase.url': 'https://cb1:18091',
      'couchbase.username': 'cbwatch',
      'couchbase.cluster-name': 'prod',
      'couchbase.password-file': '/run/secrets/cb',
      'couchbase.ca-file': 'ca.pem',
      'couchbase.insecure-skip-verify': true,
    });
  });

  it('reads simulate knobs, latency in ms or as a duration', () => {
    const { flags } = parseArgs(['simulate', '--host', '0.0.0.0', '--port', '18091', '--scenario', 'incident', '--buckets', '100', '--nodes', '3', '--latency', '5', '--replications', '4', '--speed', '60', '--stat-set', 'full', '--server-version', '6.6.5']);
    expect(flags).toEqual({ host: '0.0.0.0', port: 18091, scenario: 'incident', buckets: 100, nodes: 3, latency: 5, replications: 4, speed: 60, 'stat-set': 'full', 'server-version': '6.6.5' });
    expect(parseArgs(['simulate', '--latency', '0.2s']).flags.latency).toBe(200);
    expect(parseArgs(['simulate', '--latency', '2.5']).flags.latency).toBe(2.5);
    expect(parseArgs(['demo', '--with-prometheus', '--scenario', 'demo']).flags).toEqual({ 'with-prometheus': true, scenario: 'demo' });
  });

  it.each([
    [['--nope'], 'unknown flag --nope'],
    [['--config.chek'], 'unknown flag --config.chek (did you mean --config.check?)'],
    [['--log.levle', 'debug'], 'did you mean --log.level?'],
    [['-x'], 'unknown flag -x'],
    [['--config'], '--config needs a value (--config FILE)'],
    [['--config.check=yes'], '--config.check takes no value'],
    [['--log.level', 'verbose'], '--log.level: "verbose" is not one of trace, debug, info, warn, error'],
    [['--log.format', 'xml'], '--log.format: "xml" is not one of json, logfmt, pretty'],
    [['simulate', '--port', '70000'], '--port: 70000 is out of range (0..65535)'],
    [['simulate', '--port', 'http'], '--port: expected a whole number, got "http"'],
    [['simulate', '--buckets', '-1'], '--buckets'],
    [['simulate', '--latency', 'slow'], '--latency: expected milliseconds or a duration'],
    [['simulate', '--speed', '0'], '--speed: expected a positive number'],
    [['simulate', '--stat-set', 'most'], '--stat-set: "most" is not one of fixture, full'],
    [['simulate', '--server-version', '7.6'], '--server-version: expected a version such as 7.6.5, got "7.6"'],
    [['--config', ''], '--config: must not be empty'],
    [['run', '--port', '1'], '--port is not a flag of "run" (it belongs to: simulate, demo)'],
    [['check', '--config.check'], '--config.check is not a flag of "check"'],
    [['simulate', '--couchbase.url', 'http://x:8091'], '--couchbase.url is not a flag of "simulate"'],
    [['run', '--with-prometheus'], '--with-prometheus is not a flag of "run" (it belongs to: demo)'],
  ])('%j fails: %s', (argv, message) => {
    expect(fails(argv).message).toContain(message);
  });

  it('refuses --couchbase.password without ever echoing the value', () => {
    for (const argv of [
      ['--couchbase.password', 'hunter2'],
      ['--couchbase.password=hunter2'],
      ['check', '--couchbase.url', 'http://x:8091', '--couchbase.password=hunter2'],
    ]) {
      const e = fails(argv);
      expect(e.message).toContain('--couchbase.password');
      expect(e.message).toContain('CBWATCH_COUCHBASE_PASSWORD');
      expect(e.message).toContain('--couchbase.password-file');
      expect(e.message).not.toContain('hunter2');
    }
  });

  it('never echoes the value of an unknown --flag=value', () => {
    const e = fails(['--couchbase.pass=hunter2']);
    expect(e.message).toContain('--couchbase.pass');
    expect(e.message).not.toContain('hunter2');
  });

  it('help text lists every flag and no password flag', () => {
    const text = flagsHelp();
    for (const f of ['--config FILE', '--config.check', '--web.listen-address HOST:PORT', '--web.config.file FILE', '--log.level', '--log.format', '--couchbase.url URL', '--couchbase.password-file FILE', '--with-prometheus', '--latency MS', '--speed X']) {
      expect(text).toContain(f);
    }
    expect(text).not.toMatch(/--couchbase\.password\s/);
    const all = usage();
    expect(all).toContain(text);
    for (const c of ['run', 'check', 'demo', 'simulate']) expect(all).toMatch(new RegExp(`^  ${c} `, 'm'));
    expect(all).toContain('CBWATCH_COUCHBASE_PASSWORD');
  });
});

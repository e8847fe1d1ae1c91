/**
 * The table of bad configurations (test/config/bad/README.md): each must fail with a ConfigError naming the
 * key path (or flag / variable) and the reason. The CLI turns a ConfigError into exit code 2.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/config/flags.js';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const DIR = join(import.meta.dirname, 'bad');

interface Row {
  file: string;
  args: string[];
  env: Record<string, string>;
  expected: string[];
}

/** Splits `--a "b c" d` like a shell would (double quotes only). */
function splitArgs(text: string): string[] {
  return [...text.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

function readTable(): Row[] {
  const rows: Row[] = [];
  for (const line of readFileSync(join(DIR, 'README.md'), 'utf8').split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('| file ') || line.startsWith('|---')) continue;
    // Fragments never hold a `|`, so a plain split is enough.
    const cells = line.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
    if (cells.length !== 4) throw new Error(`bad table row: ${line}`);
    const [file, args, env, expected] = cells as [string, string, string, string];
    rows.push({
      file,
      args: args === '' ? [] : splitArgs(args),
      env: Object.fromEntries(
        env === ''
          ? []
          : env.split(',').map((kv) => {
              const i = kv.indexOf('=');
              return [kv.slice(0, i), kv.slice(i + 1)];
            }),
      ),
      expected: [...expected.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string),
    });
  }
  return rows;
}

const rows = readTable();

describe('bad configuration table', () => {
  it('has at least 40 rows and covers every bad file', () => {
    expect(rows.length).toBeGreaterThanOrEqual(40);
    const listed = new Set(rows.map((r) => r.file));
    const files = readdirSync(DIR).filter((f) => f.endsWith('.yml') && !f.startsWith('good-'));
    expect(files.filter((f) => !listed.has(f))).toEqual([]);
    for (const r of rows) expect(r.expected.length, r.file).toBeGreaterThan(0);
  });

  it.each(rows.map((r, i) => [`${i + 1}: ${r.file} ${r.args.join(' ')} ${Object.keys(r.env).join(' ')}`.trim(), r] as const))(
    '%s',
    (_name, row) => {
      const argv = [...(row.file === '-' ? [] : ['--config', join(DIR, row.file)]), ...row.args];
      let err: unknown;
      try {
        const { flags } = parseArgs(argv);
        loadConfig(flags, row.env);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      const e = err as ConfigError;
      expect(e.code).toBe('CBW_ERR_CONFIG');
      for (const fragment of row.expected) expect(e.message).toContain(fragment);
      // Secrets never reach a message: the URL password and the environment's secret values.
      expect(e.message).not.toContain('hunter2secret');
      for (const [k, v] of Object.entries(row.env)) if (/PASSWORD$|TOKEN/.test(k)) expect(e.message).not.toContain(v);
    },
  );
});

/**
 * Issue 38, item 5: the flag → command matrix is the same in `cbwatch --help`, in the parser's errors and in
 * docs/configuration.md's flag table. The oracle for each is the other: the help text as the user reads it (the
 * CLI's own output, parsed as text), the table as written in the doc, and what the parser accepts or refuses
 * with each command.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { parseArgs } from '../../src/config/flags.js';
import { COLLECTOR_NAMES } from '../../src/config/schema.js';

const ROOT = join(import.meta.dirname, '..', '..');
const COMMANDS = ['run', 'healthcheck', 'check', 'demo', 'simulate'];
const ALL = 'all';

async function helpText(): Promise<string> {
  let out = '';
  expect(await main(['--help'], (s) => void (out += s), () => undefined)).toBe(0);
  return out;
}

/** `--flag` → its commands as the help lists them (ALL: no brackets); the collector pairs as `--[no-]collector.<name>`. */
function fromHelp(help: string): Map<string, string> {
  const out = new Map<string, string>();
  const section = help.slice(help.indexOf('\nFlags'));
  for (const line of section.split('\n')) {
    const m = /^ {2}(-\S+)(?: [A-Z][A-Z.:/]*)?\s{2,}.*?(?: \[([^[\]]+)\])?$/.exec(line);
    if (!m) continue;
    const flag = (m[1] as string).replace(/^--\[no-\]collector\.\w+$/, '--[no-]collector.<name>');
    const commands = m[2] ?? ALL;
    const seen = out.get(flag);
    if (seen !== undefined) expect(commands, flag).toBe(seen);
    out.set(flag, commands);
  }
  return out;
}

/** The same from docs/configuration.md's table under "## Command line". */
function fromDocs(): Map<string, string> {
  const doc = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
  const start = doc.indexOf('\n## Command line');
  const table = doc.slice(doc.indexOf('\n| flag | commands |', start), doc.indexOf('\n\n', doc.indexOf('\n| flag | commands |', start) + 1));
  const out = new Map<string, string>();
  for (const row of table.split('\n').slice(3)) {
    const cells = row.split(' | ');
    const flags = [...(cells[0] ?? '').matchAll(/`(--[^`\s]+)/g)].map((m) => m[1] as string);
    for (const f of flags) out.set(f, (cells[1] ?? '').trim());
  }
  return out;
}

describe('the flag → command matrix', () => {
  it('--help and docs/configuration.md list the same flags with the same commands', async () => {
    const help = fromHelp(await helpText());
    const docs = fromDocs();
    expect(help.size).toBeGreaterThan(30);
    expect(Object.fromEntries(docs)).toEqual(Object.fromEntries(help));
  });

  it('the parser takes each flag with the commands listed and refuses it with the others, naming the same list', async () => {
    const help = fromHelp(await helpText());
    for (const [flag, listed] of help) {
      if (listed === ALL) continue;
      const name = flag === '--[no-]collector.<name>' ? `--no-collector.${COLLECTOR_NAMES[0] as string}` : flag;
      // A value that every flag taking one accepts (a port, a count, a path...).
      const args = (command: string): string[] => [command, name, ...(/^--(?:no-)?collector\.|^--config\.check$|^--web\.enable-lifecycle$|^--with-prometheus$|^--couchbase\.insecure-skip-verify$|^--collection\.inline$/.test(name) ? [] : [valueFor(name)])];
      for (const command of COMMANDS) {
        const takes = listed.split(', ').includes(command);
        if (takes) expect(() => parseArgs(args(command)), `${command} ${name}`).not.toThrow();
        else expect(() => parseArgs(args(command)), `${command} ${name}`).toThrow(`${name} is not a flag of "${command}" (it belongs to: ${listed})`);
      }
    }
  });

  it('--help and --version work with every command, rules included', async () => {
    for (const command of [...COMMANDS, 'rules']) {
      for (const flag of ['--help', '--version']) {
        let out = '';
        const code = await main([command, flag], (s) => void (out += s), () => undefined);
        expect(code, `${command} ${flag}`).toBe(0);
        expect(out, `${command} ${flag}`).toMatch(flag === '--help' ? /^Usage: cbwatch/ : /^cbwatch, version /);
      }
    }
  });
});

function valueFor(flag: string): string {
  if (/port$/.test(flag)) return '0';
  if (/^--(buckets|nodes|replications|web\.max-requests|latency|speed)$/.test(flag)) return '1';
  if (flag === '--stat-set') return 'full';
  if (flag === '--server-version') return '7.6.5';
  if (flag === '--log.level') return 'info';
  if (flag === '--log.format') return 'json';
  if (flag === '--shard') return '0/1';
  return 'x';
}

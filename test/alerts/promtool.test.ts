/** Every rule file in alerts/ passes `promtool check rules`, and every test file passes `promtool test rules`. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireBinary } from '../helpers/tools.js';

const ALERTS = join(import.meta.dirname, '..', '..', 'alerts');
const promtool = requireBinary('promtool');

function ymls(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.yml')).sort().map((f) => join(dir, f)) : [];
}

function run(args: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(promtool as string, args, { encoding: 'utf8', stdio: 'pipe' }) };
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    return { code: e.status ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe.skipIf(!promtool)('promtool', () => {
  for (const file of [...ymls(join(ALERTS, 'rules')), ...ymls(ALERTS).filter((f) => f.endsWith('.rules.yml'))]) {
    it(`check rules ${file.slice(ALERTS.length + 1)}`, () => {
      const r = run(['check', 'rules', file]);
      expect(r.out, r.out).toMatch(/SUCCESS/);
      expect(r.code).toBe(0);
    });
  }
  for (const file of ymls(join(ALERTS, 'tests'))) {
    it(`test rules ${file.slice(ALERTS.length + 1)}`, () => {
      const r = run(['test', 'rules', file]);
      expect(r.code, r.out).toBe(0);
    });
  }
});

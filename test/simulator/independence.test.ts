import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SIM = join(import.meta.dirname, '..', '..', 'src', 'simulator');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('the simulator is an oracle independent of the exporter', () => {
  it('imports nothing from the collectors or the metrics catalog', () => {
    const offenders = files(SIM).flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/from '([^']+)'/g)]
        .map((m) => m[1] ?? '')
        .filter((spec) => /(^|\/)(collectors|metrics)\//.test(spec))
        .map((spec) => `${f.slice(SIM.length + 1)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });
});

/** docs/configuration.md must mention every flag, environment variable, file key and collector. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLAG_NAMES } from '../../src/config/flags.js';
import { ENV_VARS } from '../../src/config/load.js';
import { COLLECTOR_NAMES, fileSchema } from '../../src/config/schema.js';
import { webConfigSchema } from '../../src/config/webconfig.js';

const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');

type Def = { type?: string; innerType?: unknown; in?: unknown; element?: unknown; shape?: Record<string, unknown>; valueType?: unknown };

/** Every object key reachable in a zod schema, as dotted paths. */
function keyPaths(schema: unknown, prefix = ''): string[] {
  const def = (schema as { def?: Def }).def;
  if (def === undefined) return [];
  switch (def.type) {
    case 'optional':
    case 'default':
    case 'nullable':
      return keyPaths(def.innerType, prefix);
    case 'pipe':
      return keyPaths(def.in, prefix);
    case 'array':
      return keyPaths(def.element, `${prefix}[]`);
    case 'object':
      return Object.entries(def.shape ?? {}).flatMap(([k, v]) => {
        const p = prefix === '' ? k : `${prefix}.${k}`;
        return [p, ...keyPaths(v, p)];
      });
    default:
      return [];
  }
}

describe('docs/configuration.md', () => {
  it.each(FLAG_NAMES)('documents --%s', (name) => expect(doc).toContain(`--${name}`));
  it.each(Object.keys(ENV_VARS))('documents %s', (name) => expect(doc).toContain(`\`${name}\``));
  it.each(COLLECTOR_NAMES)('documents collector %s', (name) => expect(doc).toContain(`| \`${name}\` |`));

  const fileKeys = keyPaths(fileSchema);
  it.each(fileKeys)('documents file key %s', (path) => {
    // Keys are documented in tables by their last part (`interval`) or with their parent (`tls.ca_file`).
    const parts = path.replace(/\[\]/g, '').split('.');
    const leaf = parts.at(-1) as string;
    const withParent = parts.slice(-2).join('.');
    expect(doc.includes(`\`${leaf}\``) || doc.includes(`\`${withParent}\``) || doc.includes(`${leaf}\``), path).toBe(true);
  });

  it.each(keyPaths(webConfigSchema))('documents web config key %s', (path) => expect(doc).toContain(`\`${path}\``));

  it('never offers a password flag', () => {
    expect(doc).not.toMatch(/`--couchbase\.password [A-Z]/);
  });
});

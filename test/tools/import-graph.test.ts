/**
 * Layers import one way: no new import cycle among the files of src/, and no new pair of directories that import
 * each other. The lists below are what is left to remove; an entry may go, none may be added.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directoryCycles, fileCycles, importGraph } from '../../src/tools/import-graph.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

function tree(files: Record<string, string>): string {
  const root = join(mkdtempSync(join(tmpdir(), 'cbwatch-imports-')), 'src');
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

describe('the import graph reader', () => {
  it('finds a two-file cycle through a type-only import and a directory pair, and ignores a parent importing its child', () => {
    const root = tree({
      'a/x.ts': "import type { Y } from './y.js';\nexport type X = Y;\n",
      'a/y.ts': "import { z } from '../b/z.js';\nexport type { X } from './x.js';\nexport type Y = number;\nexport const w = z;\n",
      'b/z.ts': "import type { Y } from '../a/y.js';\nexport const z: Y = 1;\n",
      'b/sub/leaf.ts': "import { z } from '../z.js';\nexport const leaf = z;\n",
      'c.ts': "const m = await import('./b/sub/leaf.js');\nexport const c = m.leaf;\n",
    });
    const graph = importGraph(root);
    expect(graph.get('src/c.ts')).toEqual(['src/b/sub/leaf.ts']);
    expect(fileCycles(graph)).toEqual([['src/a/x.ts', 'src/a/y.ts', 'src/b/z.ts']]);
    expect(directoryCycles(graph).map((d) => d.pair.join(' <-> '))).toEqual(['src/a <-> src/b']);
  });
});

describe('src/ imports one way', () => {
  const graph = importGraph(join(PACKAGE_ROOT, 'src'));

  it('has no import cycle among its files', () => {
    expect(fileCycles(graph).map((c) => c.join(', '))).toEqual([]);
  });

  it('has no pair of directories importing each other', () => {
    expect(directoryCycles(graph).map((d) => `${d.pair[0]} <-> ${d.pair[1]}`)).toEqual([]);
  });

  it('keeps the exposition, the REST client and the alert generator free of the imports removed from them', () => {
    const imports = (f: string): readonly string[] => graph.get(f) ?? [];
    expect(imports('src/metrics/exposition.ts').filter((f) => f.startsWith('src/collection/'))).toEqual([]);
    expect(imports('src/metrics/store.ts').filter((f) => f.startsWith('src/collectors/'))).toEqual([]);
    expect(imports('src/couchbase/request-errors.ts')).not.toContain('src/couchbase/client.ts');
    expect(imports('src/tools/alert-config.ts')).not.toContain('src/tools/gen-alerts.ts');
    for (const [file, targets] of graph) if (file.startsWith('src/metrics/')) expect(targets.filter((t) => t.startsWith('src/collectors/') || t.startsWith('src/webhooks/'))).toEqual([]);
  });
});

/**
 * The import graph of src/, read from its `import … from` / `export … from` / `import()` lines: the cycles among
 * files, and the pairs of directories that import each other (a layer that imports back up). A file directly
 * under src/ counts as its own directory; a directory and its own subdirectory are not a pair.
 *
 * `node dist/tools/import-graph.js [src]` prints both lists; test/tools/import-graph.test.ts holds them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { byCodeUnit } from '../text-order.js';

/** File (relative to the root's parent, with forward slashes) → the files of the tree it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

const IMPORT_LINE = /(?:^|\n)[ \t]*(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (/\.[cm]?ts$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The graph of every TypeScript file under `root`, type-only imports included (a type can close a circle too). */
export function importGraph(root: string): ImportGraph {
  const abs = resolve(root);
  const base = dirname(abs);
  const files = sourceFiles(abs);
  const known = new Set(files);
  const name = (p: string): string => relative(base, p).split(sep).join('/');
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const deps = new Set<string>();
    for (const m of readFileSync(f, 'utf8').matchAll(IMPORT_LINE)) {
      const spec = m[1] ?? m[2];
      if (spec === undefined) continue;
      // Sources import the compiled names: ./x.js is ./x.ts, ./x.cjs is ./x.cts.
      const target = resolve(dirname(f), spec).replace(/\.([cm]?)js$/, '.$1ts');
      if (known.has(target)) deps.add(name(target));
    }
    graph.set(name(f), [...deps].sort(byCodeUnit));
  }
  return graph;
}

/** The import cycles: each strongly connected set of more than one file, sorted (Tarjan's algorithm). */
export function fileCycles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) out.push(component.sort(byCodeUnit));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => byCodeUnit(a[0] as string, b[0] as string));
}

/** A file's layer: its directory, or the file itself when it lies directly under the root. */
function layerOf(file: string): string {
  const parts = file.split('/');
  return parts.length === 2 ? file : parts.slice(0, -1).join('/');
}

/** Two directories that import each other, with the edges each way. */
export interface DirectoryCycle {
  readonly pair: readonly [string, string];
  readonly edges: readonly string[];
}

/** Pairs of layers that import each other (not counting a directory and its own subdirectory). */
export function directoryCycles(graph: ImportGraph): DirectoryCycle[] {
  const edges = new Map<string, string[]>();
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const a = layerOf(from);
      const b = layerOf(to);
      if (a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`)) continue;
      const k = `${a}\0${b}`;
      const list = edges.get(k) ?? [];
      list.push(`${from} -> ${to}`);
      edges.set(k, list);
    }
  }
  const out: DirectoryCycle[] = [];
  for (const [k, there] of edges) {
    const [a, b] = k.split('\0') as [string, string];
    const back = edges.get(`${b}\0${a}`);
    if (byCodeUnit(a, b) < 0 && back !== undefined) out.push({ pair: [a, b], edges: [...there, ...back] });
  }
  return out.sort((x, y) => byCodeUnit(x.pair.join(' '), y.pair.join(' ')));
}

function main(argv: readonly string[]): number {
  const graph = importGraph(argv[0] ?? 'src');
  const cycles = fileCycles(graph);
  const dirs = directoryCycles(graph);
  const lines = [`file cycles: ${cycles.length}`];
  for (const c of cycles) {
    lines.push(`  ${c.join(', ')}`);
    const inCycle = new Set(c);
    for (const v of c) for (const w of graph.get(v) ?? []) if (inCycle.has(w)) lines.push(`    ${v} -> ${w}`);
  }
  lines.push(`directories importing each other: ${dirs.length}`);
  for (const d of dirs) lines.push(`  ${d.pair[0]} <-> ${d.pair[1]}`, ...d.edges.map((e) => `    ${e}`));
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));

/**
 * `node bench/out/bench/heap-summary.js FILE.heapsnapshot [N]`: a text summary of a V8 heap snapshot (the JSON that
 * `v8.writeHeapSnapshot()` / `--debug.heap-snapshot-dir` write): the heap's total, the N largest groups by own
 * (shallow) size and by retained size, and the largest strings. Groups are as DevTools' Summary shows them: an
 * object's constructor name, a string, code, array… by node type.
 *
 * Retained sizes come from the dominator tree over the strong edges (weak edges do not retain), computed with the
 * iterative algorithm of Cooper, Harvey and Kennedy over a reverse post-order from the synthetic root (node 0).
 * A group's retained size sums its members that no other member of the group dominates, so nothing counts twice.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] }; node_count: number };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface Group {
  readonly name: string;
  count: number;
  self: number;
  retained: number;
}

export interface HeapSummary {
  readonly totalBytes: number;
  readonly nodes: number;
  readonly groups: Group[];
  /** The largest strings: size, a prefix of the text. */
  readonly strings: Array<{ self: number; text: string }>;
  /** The retained size of each node (by node index), for callers that look further. */
  readonly retainedOf: (node: number) => number;
}

export function summarise(file: string): HeapSummary {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const nf = snap.snapshot.meta.node_fields;
  const ef = snap.snapshot.meta.edge_fields;
  const nodeTypes = snap.snapshot.meta.node_types[0];
  const edgeTypes = snap.snapshot.meta.edge_types[0];
  const NF = nf.length;
  const EF = ef.length;
  const nType = nf.indexOf('type');
  const nName = nf.indexOf('name');
  const nSelf = nf.indexOf('self_size');
  const nEdges = nf.indexOf('edge_count');
  const eType = ef.indexOf('type');
  const eTo = ef.indexOf('to_node');
  const weak = edgeTypes.indexOf('weak');
  const shortcut = edgeTypes.indexOf('shortcut');
  const { nodes, edges, strings } = snap;
  const n = nodes.length / NF;

  // Each node's first edge, and its strong successors.
  const firstEdge = new Uint32Array(n + 1);
  for (let i = 0, e = 0; i < n; i++) {
    firstEdge[i] = e;
    e += (nodes[i * NF + nEdges] as number) * EF;
  }
  firstEdge[n] = edges.length;
  const strong = (e: number): boolean => {
    const t = edges[e + eType] as number;
    return t !== weak && t !== shortcut;
  };

  // Reverse post-order from the root by an explicit stack.
  const order = new Int32Array(n).fill(-1);
  const post: number[] = [];
  const stack: Array<[number, number]> = [[0, firstEdge[0] as number]];
  const seen = new Uint8Array(n);
  seen[0] = 1;
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as [number, number];
    const [v, e] = top;
    if (e >= (firstEdge[v + 1] as number)) {
      order[v] = post.length;
      post.push(v);
      stack.pop();
      continue;
    }
    top[1] = e + EF;
    if (!strong(e)) continue;
    const w = (edges[e + eTo] as number) / NF;
    if (seen[w] === 0) {
      seen[w] = 1;
      stack.push([w, firstEdge[w] as number]);
    }
  }
  // Predecessors (strong edges, reachable nodes only), in post-order numbering.
  const m = post.length;
  const predCount = new Uint32Array(m + 1);
  for (let v = 0; v < n; v++) {
    if (order[v] === -1) continue;
    for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e += EF) {
      if (!strong(e)) continue;
      const w = order[(edges[e + eTo] as number) / NF] as number;
      if (w >= 0) predCount[w + 1] = (predCount[w + 1] as number) + 1;
    }
  }
  for (let i = 0; i < m; i++) predCount[i + 1] = (predCount[i + 1] as number) + (predCount[i] as number);
  const preds = new Int32Array(predCount[m] as number);
  const fill = predCount.slice(0, m);
  for (let v = 0; v < n; v++) {
    const pv = order[v] as number;
    if (pv === -1) continue;
    for (let e = firstEdge[v] as number; e < (firstEdge[v + 1] as number); e += EF) {
      if (!strong(e)) continue;
      const w = order[(edges[e + eTo] as number) / NF] as number;
      if (w < 0) continue;
      const k = fill[w] as number;
      preds[k] = pv;
      fill[w] = k + 1;
    }
  }
  // Dominators in post-order numbers; the root is m - 1.
  const idom = new Int32Array(m).fill(-1);
  const root = m - 1;
  idom[root] = root;
  const intersect = (a: number, b: number): number => {
    while (a !== b) {
      while (a < b) a = idom[a] as number;
      while (b < a) b = idom[b] as number;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let v = root - 1; v >= 0; v--) {
      let d = -1;
      for (let k = predCount[v] as number; k < (predCount[v + 1] as number); k++) {
        const p = preds[k] as number;
        if (idom[p] === -1) continue;
        d = d === -1 ? p : intersect(p, d);
      }
      if (d !== -1 && idom[v] !== d) {
        idom[v] = d;
        changed = true;
      }
    }
  }
  // Retained sizes: each node's own size added to its dominator's, children before parents (post-order).
  const retained = new Float64Array(m);
  for (let v = 0; v < m; v++) retained[v] = nodes[(post[v] as number) * NF + nSelf] as number;
  for (let v = 0; v < root; v++) {
    const d = idom[v] as number;
    if (d >= 0 && d !== v) retained[d] = (retained[d] as number) + (retained[v] as number);
  }

  const groupName = (i: number): string => {
    const type = nodeTypes[nodes[i * NF + nType] as number] ?? '?';
    const name = strings[nodes[i * NF + nName] as number] ?? '';
    if (type === 'object' || type === 'native') return name.split(' ')[0] || `(${type})`;
    if (type === 'closure') return '(closure)';
    return `(${type})`;
  };
  const groups = new Map<string, Group>();
  const memberOf = new Array<string>(m);
  let total = 0;
  for (let v = 0; v < m; v++) {
    const i = post[v] as number;
    const name = groupName(i);
    memberOf[v] = name;
    const g = groups.get(name) ?? { name, count: 0, self: 0, retained: 0 };
    g.count++;
    g.self += nodes[i * NF + nSelf] as number;
    total += nodes[i * NF + nSelf] as number;
    groups.set(name, g);
  }
  // A member's retained size counts unless an ancestor in the dominator tree is of the same group.
  for (let v = 0; v < root; v++) {
    const name = memberOf[v] as string;
    let d = idom[v] as number;
    let dominated = false;
    while (d >= 0 && d !== root) {
      if (memberOf[d] === name) {
        dominated = true;
        break;
      }
      d = idom[d] as number;
    }
    if (!dominated) (groups.get(name) as Group).retained += retained[v] as number;
  }
  const stringsBySize: Array<{ self: number; text: string }> = [];
  for (let v = 0; v < m; v++) {
    const i = post[v] as number;
    const type = nodeTypes[nodes[i * NF + nType] as number];
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') {
      stringsBySize.push({ self: nodes[i * NF + nSelf] as number, text: (strings[nodes[i * NF + nName] as number] ?? '').slice(0, 80) });
    }
  }
  stringsBySize.sort((a, b) => b.self - a.self);
  return {
    totalBytes: total,
    nodes: m,
    groups: [...groups.values()],
    strings: stringsBySize.slice(0, 20),
    retainedOf: (node) => (order[node] === -1 ? 0 : (retained[order[node] as number] as number)),
  };
}

const kb = (b: number): string => `${(b / 1024).toFixed(0)} KiB`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: node bench/out/bench/heap-summary.js FILE.heapsnapshot [N]\n');
    process.exit(2);
  }
  const top = Number(process.argv[3] ?? 25);
  const s = summarise(file);
  const out: string[] = [`${file}: ${(s.totalBytes / 1024 / 1024).toFixed(2)} MiB in ${s.nodes} reachable nodes`, '', `by own size (top ${top}):`];
  for (const g of [...s.groups].sort((a, b) => b.self - a.self).slice(0, top)) out.push(`  ${kb(g.self).padStart(10)} own  ${kb(g.retained).padStart(10)} retained  ${String(g.count).padStart(8)}  ${g.name}`);
  out.push('', `by retained size (top ${top}):`);
  for (const g of [...s.groups].sort((a, b) => b.retained - a.retained).slice(0, top)) out.push(`  ${kb(g.retained).padStart(10)} retained  ${kb(g.self).padStart(10)} own  ${String(g.count).padStart(8)}  ${g.name}`);
  out.push('', 'largest strings:');
  for (const x of s.strings) out.push(`  ${kb(x.self).padStart(10)}  ${JSON.stringify(x.text)}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

/**
 * What of the shipped dashboards and alerts works on Couchbase's native /metrics alone (no cbwatch), measured from
 * the files themselves (docs/native-metrics.md states the numbers; npm run generate recounts them).
 *
 * A query, alert or template variable works on native alone when every series it names is available without
 * cbwatch: a native metric (any name that is not a cbwatch family or recording rule), a family the bridge records
 * (alerts/native-bridge.rules.yml), or one of cbwatch's own recording rules whose expression only names such
 * series. A bridged XDCR family counts as available: without cbwatch it still has its series, only not the remote
 * cluster's name (the bridge's `or` keeps them).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/** The series names an expression needs: seriesNames without those only on the right of an `unless` (absent, it suppresses nothing). */
export function requiredNames(expr: string): string[] {
  // The right of `unless`, to the end of its parenthesised group or the next top-level `or` / `and`, is optional.
  let out = '';
  let depth = 0;
  let skipAt = -1;
  const words = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  for (let i = 0; i < words.length; i++) {
    const c = words[i] as string;
    if (c === '(') depth++;
    if (c === ')') {
      if (skipAt === depth) skipAt = -1;
      depth--;
    }
    if (skipAt < 0 && /\bunless\b/y.test(words.slice(i, i + 6)) && !/\w/.test(words[i - 1] ?? '')) skipAt = depth;
    else if (skipAt === depth && /^(or|and)\b/.test(words.slice(i, i + 4)) && !/\w/.test(words[i - 1] ?? '')) skipAt = -1;
    out += skipAt >= 0 ? ' ' : c;
  }
  return seriesNames(out);
}

/** The series names an expression reads (function names, label matchers, ranges, strings and keywords left out). */
export function seriesNames(expr: string): string[] {
  const bare = expr
    .replace(/#.*$/gm, ' ')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\b(by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\w+/g, ' ');
  return [...bare.matchAll(/(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)]
    .map((m) => m[1] as string)
    .filter((n) => !/^(or|and|unless|bool|offset|by|on|without|ignoring|group_left|group_right|inf|nan|Inf|NaN)$/.test(n));
}

export interface Coverage {
  readonly queries: number;
  readonly nativeQueries: number;
  readonly alerts: number;
  readonly nativeAlerts: readonly string[];
  readonly variables: number;
  readonly nativeVariables: number;
  /** Per dashboard file: queries, and those that work on native alone. */
  readonly dashboards: ReadonlyArray<{ readonly file: string; readonly queries: number; readonly native: number }>;
}

interface Rule {
  readonly record?: string;
  readonly alert?: string;
  readonly expr?: string;
}

function rulesOf(path: string): Rule[] {
  const doc = parse(readFileSync(path, 'utf8')) as { groups?: Array<{ rules?: Rule[] }> } | null;
  return (doc?.groups ?? []).flatMap((g) => g.rules ?? []);
}

/** Count, from the files under `root` (dashboards/*.json, alerts/cbwatch.rules.yml; the bridge's records as given, else alerts/native-bridge.rules.yml). */
export function nativeCoverage(root: string, bridgedRecords?: ReadonlySet<string>): Coverage {
  const own = rulesOf(join(root, 'alerts', 'cbwatch.rules.yml'));
  const bridged = bridgedRecords ?? new Set(rulesOf(join(root, 'alerts', 'native-bridge.rules.yml')).flatMap((r) => (r.record ? [r.record] : [])));
  const records = new Map(own.flatMap((r) => (r.record && r.expr ? [[r.record, r.expr] as const] : [])));
  const memo = new Map<string, boolean>();
  const available = (name: string): boolean => {
    if (bridged.has(name)) return true;
    const expr = records.get(name);
    if (expr !== undefined) {
      if (!memo.has(name)) {
        memo.set(name, false);
        memo.set(name, seriesNames(expr).every(available));
      }
      return memo.get(name) as boolean;
    }
    return !/^(couchbase|cbwatch)_/.test(name);
  };
  // cbwatch's own `up` (job cbwatch) is a cbwatch series too: without cbwatch it is absent, and an alert on it fires.
  const works = (expr: string): boolean => !/job=~?"cbwatch/.test(expr) && requiredNames(expr).every(available);

  const dashboards: Array<{ file: string; queries: number; native: number }> = [];
  const worksQuery = (expr: string): boolean => works(expr);
  let variables = 0;
  let nativeVariables = 0;
  for (const file of readdirSync(join(root, 'dashboards')).filter((f) => f.endsWith('.json')).sort()) {
    const d = JSON.parse(readFileSync(join(root, 'dashboards', file), 'utf8')) as {
      panels?: unknown[];
      templating?: { list?: Array<{ type?: string; query?: unknown; definition?: string }> };
    };
    const exprs: string[] = [];
    const walk = (ps: unknown[] | undefined): void => {
      for (const p of ps ?? []) {
        const panel = p as { targets?: Array<{ expr?: unknown }>; panels?: unknown[] };
        for (const t of panel.targets ?? []) if (typeof t.expr === 'string' && t.expr.trim() !== '') exprs.push(t.expr);
        walk(panel.panels);
      }
    };
    walk(d.panels);
    dashboards.push({ file, queries: exprs.length, native: exprs.filter(worksQuery).length });
    // A variable works when its query does and so do the variables it reads ($couchbase_cluster comes first).
    const ok = new Map<string, boolean>();
    for (const v of d.templating?.list ?? []) {
      if (v.type !== 'query') continue;
      const q = typeof v.query === 'string' ? v.query : ((v.query as { query?: string } | undefined)?.query ?? v.definition ?? '');
      const inner = /label_values\((.*),\s*\w+\)\s*$/.exec(q)?.[1] ?? q;
      const uses = [...inner.matchAll(/\$(\w+)/g)].map((m) => m[1] as string);
      const good = works(inner) && uses.every((u) => ok.get(u) !== false);
      ok.set((v as { name?: string }).name ?? '', good);
      variables++;
      if (good) nativeVariables++;
    }
  }
  const alerts = own.filter((r) => r.alert !== undefined && r.expr !== undefined);
  return {
    queries: dashboards.reduce((a, d) => a + d.queries, 0),
    nativeQueries: dashboards.reduce((a, d) => a + d.native, 0),
    alerts: alerts.length,
    nativeAlerts: alerts.filter((r) => works(r.expr as string)).map((r) => r.alert as string),
    variables,
    nativeVariables,
    dashboards,
  };
}

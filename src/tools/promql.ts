/**
 * Light PromQL helpers for the checks on alert rules and dashboards: substitute Grafana's variables so
 * promtool can parse a panel query, list the metric names an expression uses, and find counters used
 * outside rate()/increase(). Syntax is verified by promtool itself; these only need to be right on
 * expressions promtool accepts.
 */

const KEYWORDS = new Set([
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset',
  'inf', 'nan', 'Inf', 'NaN', 'atan2',
  // Aggregation operators may be followed by `by (…)` before their parenthesis.
  'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile',
]);

/** Functions through which a counter may be read. */
export const COUNTER_FUNCTIONS = new Set(['rate', 'irate', 'increase', 'resets', 'changes']);

/** Grafana's built-in interval variables, as promtool-parseable durations. */
const GRAFANA_INTERVALS: Record<string, string> = {
  __rate_interval: '5m',
  __interval: '1m',
  __range: '1h',
};

/**
 * Replace Grafana variables: interval built-ins by durations, `$__range_s`-like numbers by 3600, every
 * other `$var` / `${var}` / `${var:fmt}` (cluster, bucket, index… — used inside `=~"…"` matchers) by `.*`.
 */
export function substituteGrafanaVars(expr: string): string {
  return expr.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::[^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, a: string | undefined, b: string | undefined) => {
    const name = (a ?? b) as string;
    if (name in GRAFANA_INTERVALS) return GRAFANA_INTERVALS[name] as string;
    if (name === '__range_s') return '3600';
    if (name === '__interval_ms') return '60000';
    return '.*';
  });
}

/** A Grafana `label_values(selector, label)` variable query as a plain PromQL selector (or as is). */
export function variableQueryExpr(query: string): string {
  const m = /^\s*label_values\(\s*(.+?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$/.exec(query);
  if (m) return m[1] as string;
  const q = /^\s*query_result\(\s*(.+)\s*\)\s*$/.exec(query);
  return q ? (q[1] as string) : query;
}

/** Blank out string literals, keeping positions (so indices stay valid for the nesting scan). */
function blankStrings(expr: string): string {
  return expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, (s) => ' '.repeat(s.length));
}

/** Blank label matcher blocks `{…}`, range/subquery brackets `[…]` and grouping label lists. */
function blankNonMetrics(expr: string): string {
  let s = blankStrings(expr);
  s = s.replace(/\{[^}]*\}/g, (m) => ' '.repeat(m.length));
  s = s.replace(/\[[^\]]*\]/g, (m) => ' '.repeat(m.length));
  s = s.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, (m, kw: string) => kw + ' '.repeat(m.length - kw.length));
  return s;
}

export interface MetricRef {
  readonly name: string;
  /** Index in the expression. */
  readonly at: number;
}

/** Every metric name an expression selects (identifiers that are not functions, keywords or numbers). */
export function metricRefs(expr: string): MetricRef[] {
  const s = blankNonMetrics(expr);
  const out: MetricRef[] = [];
  const re = /[A-Za-z_:][A-Za-z0-9_:]*/g;
  for (const m of s.matchAll(re)) {
    const at = m.index ?? 0;
    const name = m[0];
    const prev = at > 0 ? (s[at - 1] as string) : '';
    // Part of a number (1e3) or a duration (5m, 1h30m).
    if (/[0-9.]/.test(prev)) continue;
    if (KEYWORDS.has(name)) continue;
    const rest = s.slice(at + name.length);
    if (/^\s*\(/.test(rest)) continue; // a function call
    out.push({ name, at });
  }
  return out;
}

export function metricNames(expr: string): string[] {
  return [...new Set(metricRefs(expr).map((r) => r.name))].sort();
}

/** Names of the function calls enclosing position `at`, innermost first. */
function enclosingCalls(s: string, at: number): string[] {
  const calls: string[] = [];
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    const c = s[i];
    if (c === ')') depth++;
    else if (c === '(') {
      if (depth > 0) depth--;
      else {
        const before = s.slice(0, i).trimEnd();
        const m = /([A-Za-z_][A-Za-z0-9_]*)$/.exec(before);
        calls.push(m ? (m[1] as string) : '');
      }
    }
  }
  return calls;
}

/**
 * Metric references that are counters (by the predicate) and are not read through rate(), irate(),
 * increase(), resets() or changes(). Comparing a raw counter resets with the process and is never right.
 */
export function rawCounterRefs(expr: string, isCounter: (name: string) => boolean): string[] {
  const s = blankNonMetrics(expr);
  const bad: string[] = [];
  for (const r of metricRefs(expr)) {
    if (!isCounter(r.name)) continue;
    if (!enclosingCalls(s, r.at).some((c) => COUNTER_FUNCTIONS.has(c))) bad.push(r.name);
  }
  return [...new Set(bad)];
}

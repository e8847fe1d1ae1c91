/**
 * Configurable alerts: one source (alerts/rules/*.yml, plus the tunable numbers declared in
 * alerts/parameters.yml) turned into templates, from which come
 *
 * - the shipped alerts/cbwatch.rules.yml (the templates filled with the defaults; the generator checks that this
 *   gives back exactly the rules of the fragments),
 * - `cbwatch rules --set key=value` (the templates filled with a changed configuration),
 * - the jsonnet mixin's alerts (mixin/alerts.libsonnet: the same templates as jsonnet format strings over `_config`).
 *
 * A template is the rule's text with `%(key)s` where a configurable value goes and `%%` for a literal percent
 * sign — the syntax of jsonnet's `%` operator, so both renderings share it. What becomes configurable, per alert:
 * `enabled`, `for` (and its reading in words, "15 minutes", in the summary and description), `severity`, the
 * numbers or durations declared in alerts/parameters.yml (in the expression, and in words in the annotations),
 * the runbook URL base; and, for every expression, the extra `selector` added to each cbwatch/Couchbase series
 * and the `exporterJobSelector` of the `up` series. A rule added to a fragment later gets `enabled`, `for`,
 * `severity`, the selectors and the runbook base with no code change.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PACKAGE_ROOT } from '../paths.js';
import type { AlertingRule, Fragment, RecordingRule, Rule, RuleGroup } from './rule-types.js';

export const DEFAULT_RUNBOOK_BASE = 'https://github.com/cbwatch/cbwatch/blob/main/alerts/runbook.md';
export const DEFAULT_EXPORTER_JOB_SELECTOR = 'job=~"cbwatch.*"';

export type ParamValue = number | string;
export type AlertSettings = Record<string, ParamValue | boolean>;

/** The configuration of every alert: the mixin's `_config` and `cbwatch rules --set`'s keys. */
export interface AlertsConfig {
  /** Extra label matchers added to every cbwatch/Couchbase series of every expression, e.g. `job="cbwatch-prod"`. */
  selector: string;
  /** The matchers of the `up` series of CbwatchExporterDown (the scrape job of cbwatch). */
  exporterJobSelector: string;
  /** Where the runbook lives; each alert's runbook_url is this plus `#<alert name in lower case>`. */
  runbookUrlBase: string;
  alerts: Record<string, AlertSettings>;
}

/** alerts/parameters.yml: alert → parameter name → its default, which must appear literally in the rule. */
export type Parameters = Record<string, Record<string, ParamValue>>;

interface RuleTemplate {
  readonly kind: 'alert' | 'record';
  readonly name: string;
  readonly expr: string;
  readonly for?: string;
  readonly keep_firing_for?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

export interface GroupTemplate {
  readonly name: string;
  readonly interval?: string;
  readonly limit?: number;
  readonly rules: readonly RuleTemplate[];
}

const RESERVED = new Set(['enabled', 'for', 'severity', 'sel', 'selComma', 'selBraces', 'exporterJobSelector', 'runbookUrlBase']);
const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;
const UNIT_NAMES: Record<string, string> = { s: 'second', m: 'minute', h: 'hour', d: 'day', w: 'week', y: 'year' };

/** A duration in words as the annotations write it: `15m` → `15 minutes`, `1h` → `an hour`; other forms unchanged. */
export function humanDuration(d: string): string {
  const m = /^(\d+)([smhdwy])$/.exec(d);
  if (!m) return d;
  const [, n, unit] = m as unknown as [string, string, string];
  const name = UNIT_NAMES[unit] as string;
  if (n === '1') return unit === 'h' ? 'an hour' : `a ${name}`;
  return `${n} ${name}s`;
}

/** Numbers as the templates print them (the mixin's lib.libsonnet prints the same for the values it is tested with). */
export function formatNumber(v: number): string {
  return String(v);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const escapePct = (s: string): string => s.replace(/%/g, '%%');

/** Apply `f` to the parts of a PromQL expression outside string literals. */
function outsideStrings(expr: string, f: (code: string) => string): string {
  const parts = expr.split(/("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)/);
  return parts.map((p, i) => (i % 2 === 1 ? p : f(p))).join('');
}

const LABEL_LIST_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

/**
 * Insert the selector placeholders after every cbwatch/Couchbase series name of an (escaped) expression:
 * `name` → `name%(selBraces)s`, `name{a="b"}` → `name{a="b"%(selComma)s}`, `name{}` → `name{%(sel)s}`.
 * Function names (followed by `(`), label names (inside braces or after by/without/on/ignoring/group_*) and
 * string contents are left alone.
 */
export function injectSelector(expr: string): string {
  let out = '';
  let i = 0;
  const n = expr.length;
  while (i < n) {
    const c = expr[i] as string;
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < n && expr[j] !== c) j += expr[j] === '\\' && c !== '`' ? 2 : 1;
      out += expr.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '{') {
      // A matcher block not attached to a name (`{__name__=~"…"}`): copied as is.
      const j = matchingBrace(expr, i);
      out += expr.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (/[A-Za-z_:]/.test(c) && (i === 0 || !/[\w:.]/.test(expr[i - 1] as string))) {
      let j = i;
      while (j < n && /[\w:]/.test(expr[j] as string)) j++;
      const word = expr.slice(i, j);
      let k = j;
      while (k < n && /\s/.test(expr[k] as string)) k++;
      if (LABEL_LIST_KEYWORDS.has(word) && expr[k] === '(') {
        const end = expr.indexOf(')', k);
        out += expr.slice(i, end + 1);
        i = end + 1;
        continue;
      }
      if (expr[k] === '(' || !/^(couchbase|cbwatch)_/.test(word)) {
        out += word;
        i = j;
        continue;
      }
      if (expr[k] === '{') {
        const end = matchingBrace(expr, k);
        const inner = expr.slice(k + 1, end);
        out += expr.slice(i, k + 1) + (inner.trim() === '' ? `${inner}%(sel)s` : `${inner}%(selComma)s`) + '}';
        i = end + 1;
        continue;
      }
      out += `${word}%(selBraces)s`;
      i = j;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

function matchingBrace(expr: string, open: number): number {
  let j = open + 1;
  while (j < expr.length && expr[j] !== '}') {
    const q = expr[j] as string;
    if (q === '"' || q === "'" || q === '`') {
      j++;
      while (j < expr.length && expr[j] !== q) j += expr[j] === '\\' && q !== '`' ? 2 : 1;
    }
    j++;
  }
  if (j >= expr.length) throw new Error(`unbalanced braces in ${expr}`);
  return j;
}

function literalOf(v: ParamValue): string {
  return typeof v === 'number' ? formatNumber(v) : v;
}

/** Replace a parameter's literal in expression code (not in strings): numbers as whole tokens, durations likewise. */
function replaceInExpr(expr: string, lit: string, key: string): { text: string; count: number } {
  let count = 0;
  const re = new RegExp(`(?<![\\w.%])${escapeRe(lit)}(?![\\w.])`, 'g');
  const text = outsideStrings(expr, (code) =>
    code.replace(re, () => {
      count++;
      return `%(${key})s`;
    }),
  );
  return { text, count };
}

/** Replace a value's reading in an annotation: `98` in "threshold 98%", `900` in "900s", "30 minutes". */
function replaceInText(text: string, lit: string, key: string): string {
  const re = new RegExp(`(?<![\\w.%])${escapeRe(lit)}(?!\\d|\\.\\d)`, 'g');
  return text.replace(re, `%(${key})s`);
}

function alertTemplate(r: AlertingRule, params: Readonly<Record<string, ParamValue>>, where: string): RuleTemplate {
  let expr = injectSelector(escapePct(r.expr)).split(DEFAULT_EXPORTER_JOB_SELECTOR).join('%(exporterJobSelector)s');
  const textKeys: Array<[string, string]> = [];
  if (r.for !== undefined) textKeys.push([humanDuration(r.for), 'forHuman']);
  for (const [key, value] of Object.entries(params)) {
    if (RESERVED.has(key) || key.endsWith('Human') || !/^[a-z][A-Za-z0-9]*$/.test(key)) throw new Error(`${where}: parameter name ${key} is reserved or not lowerCamelCase`);
    if (typeof value === 'string' && !DURATION.test(value)) throw new Error(`${where}.${key}: a string parameter must be a duration (e.g. 30m)`);
    const lit = literalOf(value);
    const rep = replaceInExpr(expr, lit, key);
    if (rep.count === 0) throw new Error(`${where}.${key}: ${lit} does not appear in the expression of ${r.alert}`);
    expr = rep.text;
    textKeys.push(typeof value === 'string' ? [humanDuration(value), `${key}Human`] : [lit, key]);
  }
  const seen = new Set<string>();
  for (const [lit] of textKeys) {
    if (seen.has(lit)) throw new Error(`${where}: two configurable values of ${r.alert} read "${lit}" in its annotations`);
    seen.add(lit);
  }
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.annotations ?? {})) {
    if (k === 'runbook_url') {
      annotations[k] = v.startsWith(DEFAULT_RUNBOOK_BASE) ? `%(runbookUrlBase)s${escapePct(v.slice(DEFAULT_RUNBOOK_BASE.length))}` : escapePct(v);
      continue;
    }
    let t = escapePct(v);
    if (k === 'summary' || k === 'description') for (const [lit, key] of textKeys) t = replaceInText(t, lit, key);
    annotations[k] = t;
  }
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.labels ?? {})) labels[k] = k === 'severity' ? '%(severity)s' : escapePct(v);
  return {
    kind: 'alert',
    name: r.alert,
    expr,
    ...(r.for !== undefined ? { for: '%(for)s' } : {}),
    ...(r.keep_firing_for !== undefined ? { keep_firing_for: escapePct(r.keep_firing_for) } : {}),
    labels,
    annotations,
  };
}

function recordTemplate(r: RecordingRule): RuleTemplate {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.labels ?? {})) labels[k] = escapePct(v);
  return { kind: 'record', name: r.record, expr: injectSelector(escapePct(r.expr)), labels, annotations: {} };
}

/** alerts/parameters.yml, checked for shape. */
export function loadParameters(root: string = PACKAGE_ROOT): Parameters {
  const file = join(root, 'alerts', 'parameters.yml');
  if (!existsSync(file)) return {};
  const doc: unknown = parse(readFileSync(file, 'utf8')) ?? {};
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('alerts/parameters.yml: expected a map of alert names');
  const out: Parameters = {};
  for (const [alert, ps] of Object.entries(doc as Record<string, unknown>)) {
    if (typeof ps !== 'object' || ps === null || Array.isArray(ps)) throw new Error(`alerts/parameters.yml: ${alert} needs a map of parameters`);
    const m: Record<string, ParamValue> = {};
    for (const [k, v] of Object.entries(ps as Record<string, unknown>)) {
      if (typeof v !== 'number' && typeof v !== 'string') throw new Error(`alerts/parameters.yml: ${alert}.${k} must be a number or a duration`);
      m[k] = v;
    }
    out[alert] = m;
  }
  return out;
}

/** Templates of every rule, and the default configuration that fills them back into the fragments' rules. */
export function buildTemplates(fragments: readonly Fragment[], params: Parameters): { groups: GroupTemplate[]; defaults: AlertsConfig } {
  const alerts: Record<string, AlertSettings> = {};
  const used = new Set<string>();
  const groups = fragments.flatMap((f) =>
    f.groups.map((g): GroupTemplate => ({
      name: g.name,
      ...(g.interval !== undefined ? { interval: g.interval } : {}),
      ...(g.limit !== undefined ? { limit: g.limit } : {}),
      rules: g.rules.map((r: Rule) => {
        if (!('alert' in r)) return recordTemplate(r);
        const p = params[r.alert] ?? {};
        if (params[r.alert]) used.add(r.alert);
        const settings: AlertSettings = { enabled: true };
        if (r.for !== undefined) settings.for = r.for;
        if (r.labels?.severity !== undefined) settings.severity = r.labels.severity;
        Object.assign(settings, p);
        alerts[r.alert] = settings;
        return alertTemplate(r, p, `alerts/parameters.yml: ${r.alert}`);
      }),
    })),
  );
  for (const a of Object.keys(params)) if (!used.has(a)) throw new Error(`alerts/parameters.yml: no alert named ${a} in alerts/rules`);
  return { groups, defaults: { selector: '', exporterJobSelector: DEFAULT_EXPORTER_JOB_SELECTOR, runbookUrlBase: DEFAULT_RUNBOOK_BASE, alerts } };
}

/** The values a template of `alert` is filled with (the same object the mixin's lib.values builds). */
export function templateValues(config: AlertsConfig, alert: string | undefined): Record<string, string> {
  const sel = config.selector;
  const v: Record<string, string> = {
    sel,
    selComma: sel === '' ? '' : `, ${sel}`,
    selBraces: sel === '' ? '' : `{${sel}}`,
    exporterJobSelector: config.exporterJobSelector,
    runbookUrlBase: config.runbookUrlBase,
  };
  if (alert === undefined) return v;
  for (const [k, x] of Object.entries(config.alerts[alert] ?? {})) {
    v[k] = typeof x === 'number' ? formatNumber(x) : String(x);
    if (typeof x === 'string') v[`${k}Human`] = humanDuration(x);
  }
  return v;
}

export function fill(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/%(%|\((\w+)\)s)/g, (_, what: string, key: string | undefined) => {
    if (what === '%') return '%';
    const v = values[key as string];
    if (v === undefined) throw new Error(`no value for %(${key as string})s`);
    return v;
  });
}

/** The rules for a configuration; disabled alerts are left out, and so is a group left with no rule. */
export function renderConfigured(groups: readonly GroupTemplate[], config: AlertsConfig): RuleGroup[] {
  const out: RuleGroup[] = [];
  for (const g of groups) {
    const rules: Rule[] = [];
    for (const t of g.rules) {
      if (t.kind === 'record') {
        const v = templateValues(config, undefined);
        const labels = Object.fromEntries(Object.entries(t.labels).map(([k, x]) => [k, fill(x, v)]));
        rules.push({ record: t.name, expr: fill(t.expr, v), ...(Object.keys(labels).length ? { labels } : {}) });
        continue;
      }
      if (config.alerts[t.name]?.enabled === false) continue;
      const v = templateValues(config, t.name);
      const labels = Object.fromEntries(Object.entries(t.labels).map(([k, x]) => [k, fill(x, v)]));
      const annotations = Object.fromEntries(Object.entries(t.annotations).map(([k, x]) => [k, fill(x, v)]));
      rules.push({
        alert: t.name,
        expr: fill(t.expr, v),
        ...(t.for !== undefined ? { for: fill(t.for, v) } : {}),
        ...(t.keep_firing_for !== undefined ? { keep_firing_for: fill(t.keep_firing_for, v) } : {}),
        ...(Object.keys(labels).length ? { labels } : {}),
        ...(Object.keys(annotations).length ? { annotations } : {}),
      });
    }
    if (rules.length) out.push({ name: g.name, ...(g.interval !== undefined ? { interval: g.interval } : {}), ...(g.limit !== undefined ? { limit: g.limit } : {}), rules });
  }
  return out;
}

/** Every `--set` key of a configuration, with its current value (for help and error messages). */
export function configKeys(config: AlertsConfig): Array<[string, ParamValue | boolean]> {
  const out: Array<[string, ParamValue | boolean]> = [
    ['selector', config.selector],
    ['exporterJobSelector', config.exporterJobSelector],
    ['runbookUrlBase', config.runbookUrlBase],
  ];
  for (const [a, s] of Object.entries(config.alerts)) for (const [k, v] of Object.entries(s)) out.push([`alerts.${a}.${k}`, v]);
  return out;
}

export class AlertConfigError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Apply `key=value` overrides. A value takes the type of the default it replaces: numbers must be finite,
 * `enabled` true or false, `for` and duration parameters Prometheus durations, `severity` a label value.
 */
export function applyOverrides(config: AlertsConfig, sets: readonly string[]): AlertsConfig {
  const next: AlertsConfig = { ...config, alerts: Object.fromEntries(Object.entries(config.alerts).map(([a, s]) => [a, { ...s }])) };
  for (const set of sets) {
    const eq = set.indexOf('=');
    if (eq <= 0) throw new AlertConfigError(set, `--set ${set}: expected key=value`);
    const key = set.slice(0, eq);
    const raw = set.slice(eq + 1);
    if (key === 'selector' || key === 'exporterJobSelector' || key === 'runbookUrlBase') {
      if (key !== 'selector' && raw === '') throw new AlertConfigError(key, `--set ${key}: must not be empty`);
      next[key] = raw;
      continue;
    }
    const m = /^alerts\.([A-Za-z0-9]+)\.([A-Za-z0-9]+)$/.exec(key);
    const settings = m ? next.alerts[m[1] as string] : undefined;
    const param = m?.[2] as string;
    if (!m || !settings || !(param in settings)) {
      throw new AlertConfigError(key, `--set ${key}: unknown key (keys: selector, exporterJobSelector, runbookUrlBase, alerts.<Alert>.{enabled,for,severity,<parameter>}; \`cbwatch rules --list\` prints them all)`);
    }
    const current = settings[param];
    if (typeof current === 'boolean') {
      if (raw !== 'true' && raw !== 'false') throw new AlertConfigError(key, `--set ${key}: expected true or false, got ${JSON.stringify(raw)}`);
      settings[param] = raw === 'true';
    } else if (typeof current === 'number') {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw new AlertConfigError(key, `--set ${key}: expected a number, got ${JSON.stringify(raw)}`);
      settings[param] = n;
    } else if (param === 'severity') {
      if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw new AlertConfigError(key, `--set ${key}: expected a severity such as critical, warning or info`);
      settings[param] = raw;
    } else {
      if (!DURATION.test(raw)) throw new AlertConfigError(key, `--set ${key}: expected a duration such as 15m or 1h, got ${JSON.stringify(raw)}`);
      settings[param] = raw;
    }
  }
  return next;
}

// --- jsonnet ---------------------------------------------------------------------------------------------

const jstr = (s: string): string => JSON.stringify(s);

function jsonnetKey(k: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !['for', 'local', 'if', 'then', 'else', 'function', 'import', 'true', 'false', 'null', 'self', 'super', 'error', 'assert', 'in', 'tailstrict', 'importstr', 'importbin'].includes(k) ? k : jstr(k);
}

function jsonnetValue(v: ParamValue | boolean): string {
  return typeof v === 'string' ? jstr(v) : String(v);
}

/**
 * A template as a jsonnet concatenation over `v` (the values of lib.values): `"a > " + v.threshold`. Plain
 * concatenation rather than jsonnet's `%` operator, whose std.format walks each long description in jsonnet
 * code and made the build take seconds.
 */
function concatenation(template: string): string {
  const parts: string[] = [];
  let lit = '';
  let last = 0;
  for (const m of template.matchAll(/%(%|\((\w+)\)s)/g)) {
    lit += template.slice(last, m.index);
    last = m.index + m[0].length;
    if (m[1] === '%') {
      lit += '%';
      continue;
    }
    if (lit !== '') parts.push(jstr(lit));
    lit = '';
    const key = m[2] as string;
    parts.push(jsonnetKey(key) === key ? `v.${key}` : `v[${jstr(key)}]`);
  }
  lit += template.slice(last);
  if (lit !== '' || parts.length === 0) parts.push(jstr(lit));
  return parts.join(' + ');
}

/** mixin/alerts.libsonnet: the default `_config` of every alert and `prometheusAlerts` built from the templates. */
export function mixinAlertsText(groups: readonly GroupTemplate[], defaults: AlertsConfig): string {
  const L: string[] = [
    '// Generated by `npm run generate` from alerts/rules/*.yml and alerts/parameters.yml. Do not edit.',
    '// Each string is built from v = lib.values($._config, alert): the alert\'s _config entry, its durations in',
    '// words (<key>Human), the selector forms (sel, selComma, selBraces) and the runbook base.',
    "local lib = import 'lib.libsonnet';",
    '{',
    '  _config+:: {',
    `    selector: ${jstr(defaults.selector)},`,
    `    exporterJobSelector: ${jstr(defaults.exporterJobSelector)},`,
    `    runbookUrlBase: ${jstr(defaults.runbookUrlBase)},`,
    '    alerts+: {',
  ];
  for (const [a, s] of Object.entries(defaults.alerts)) {
    L.push(`      ${jsonnetKey(a)}: { ${Object.entries(s).map(([k, v]) => `${jsonnetKey(k)}: ${jsonnetValue(v)}`).join(', ')} },`);
  }
  L.push('    },', '  },', '', '  prometheusAlerts+:: {', '    local c = $._config,', '    groups+: lib.nonEmptyGroups([');
  for (const g of groups) {
    L.push('      {', `        name: ${jstr(g.name)},`);
    if (g.interval !== undefined) L.push(`        interval: ${jstr(g.interval)},`);
    if (g.limit !== undefined) L.push(`        limit: ${g.limit},`);
    L.push('        rules: std.prune([');
    for (const t of g.rules) {
      const f = concatenation;
      L.push(`          local v = lib.values(c, ${t.kind === 'alert' ? jstr(t.name) : 'null'});`);
      L.push(t.kind === 'alert' ? `          if c.alerts[${jstr(t.name)}].enabled then {` : '          {');
      L.push(`            ${t.kind}: ${jstr(t.name)},`, `            expr: ${f(t.expr)},`);
      if (t.for !== undefined) L.push(`            'for': ${f(t.for)},`);
      if (t.keep_firing_for !== undefined) L.push(`            keep_firing_for: ${f(t.keep_firing_for)},`);
      if (Object.keys(t.labels).length) {
        L.push('            labels: {');
        for (const [k, x] of Object.entries(t.labels)) L.push(`              ${jsonnetKey(k)}: ${f(x)},`);
        L.push('            },');
      }
      if (Object.keys(t.annotations).length) {
        L.push('            annotations: {');
        for (const [k, x] of Object.entries(t.annotations)) L.push(`              ${jsonnetKey(k)}: ${f(x)},`);
        L.push('            },');
      }
      L.push('          },');
    }
    L.push('        ]),', '      },');
  }
  L.push('    ]),', '  },', '}', '');
  return L.join('\n');
}

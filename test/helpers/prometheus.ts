/**
 * Shared by the end-to-end tests that run a real Prometheus (test/e2e/): polling an API, reading JSON, the
 * Sync Gateway webhook posts, cbwatch's shipped alert rules with every `for:` shortened, and the check that
 * every shipped dashboard query returns data.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { defaultClusterConfig, resolveCollectors } from '../../src/config/defaults.js';
import { COLLECTOR_NAMES, collectorSchemas, webhookSchema } from '../../src/config/schema.js';
import type { CollectorName, CollectorOptions } from '../../src/config/schema.js';
import type { ClusterConfig, Config } from '../../src/config/types.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { parseRuleFile, rulesWithFor } from '../../src/tools/gen-alerts.js';
import { renderDashboards } from '../../src/tools/gen-dashboards.js';
import { dashboardExprs } from '../../src/tools/grafana.js';
import type { Json } from '../../src/tools/grafana.js';
import { substituteGrafanaVars, variableQueryExpr } from '../../src/tools/promql.js';

/** Poll `check` until it returns a value (not undefined) or the time is up; then throw `explain()`. */
export async function pollUntil<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs: number, explain: () => Promise<string> | string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(await explain());
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** GET `url` as JSON, with an `authorization` header when `auth` is given. */
export async function getJson<T>(url: string, auth?: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000), headers: auth ? { authorization: auth } : {} });
  return (await res.json()) as T;
}

/** Sync Gateway document_changed posts to cbwatch's webhook receiver: a document and a deletion. */
export async function postSyncGatewayChanges(daemonUrl: string, db: string, token: string): Promise<void> {
  for (const doc of [{ _id: 'hotel_1', type: 'hotel', name: 'x' }, { _id: 'hotel_2', _deleted: true }]) {
    const res = await fetch(`${daemonUrl}/webhooks/sync-gateway/${db}?token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(doc),
    });
    await res.arrayBuffer();
    expect(res.status).toBeLessThan(300);
  }
}

/** Writes a templated copy of alerts/cbwatch.rules.yml (never the shipped file) with every `for:` at 2s into `dir`; its path. */
export function writeShortenedAlertRules(dir: string): string {
  const shipped = readFileSync(join(PACKAGE_ROOT, 'alerts', 'cbwatch.rules.yml'), 'utf8');
  const rulesFile = join(dir, 'cbwatch.e2e.rules.yml');
  writeFileSync(rulesFile, rulesWithFor(parseRuleFile(shipped, 'alerts/cbwatch.rules.yml'), '2s'));
  return rulesFile;
}

export type QueryAnswer = { status: string; error?: string; data?: { result: unknown[] } };

/**
 * Every query of every shipped dashboard (only the panels' with `panelsOnly`, else the variables' too), keyed
 * `uid/panel title` or `uid/where`, each with the Grafana variables substituted. Fails when a key of `exceptions`
 * names none of them (`what` describes that in the message), so the list cannot rot.
 */
export function dashboardQueries(o: { panelsOnly: boolean; exceptions: Record<string, string>; what: string }): { key: string; expr: string }[] {
  const queries: { key: string; expr: string }[] = [];
  for (const [path, text] of Object.entries(renderDashboards())) {
    if (!path.endsWith('.json')) continue;
    const d = JSON.parse(text) as Json & { uid: string };
    for (const e of dashboardExprs(d)) {
      if (o.panelsOnly && !e.where.startsWith('panel')) continue;
      const key = e.where.startsWith('panel') ? `${d.uid}/${e.where.slice('panel "'.length, -1)}` : `${d.uid}/${e.where}`;
      queries.push({ key, expr: substituteGrafanaVars(e.where.startsWith('variable') ? variableQueryExpr(e.expr) : e.expr) });
    }
  }
  const known = new Set(queries.map((q) => q.key));
  expect(Object.keys(o.exceptions).filter((k) => !known.has(k)), o.what).toEqual([]);
  return queries;
}

/**
 * Polls until every query answers without error and with data (but those keyed in `exceptions`), or fails
 * listing what stays empty (`noun` names them in the message) and what errs.
 */
export async function expectQueriesHaveData(
  query: (expr: string) => Promise<QueryAnswer>,
  queries: readonly { key: string; expr: string }[],
  exceptions: Record<string, string>,
  timeoutMs: number,
  noun: string,
): Promise<void> {
  let empty: string[] = [];
  let errors: string[] = [];
  await pollUntil(
    async () => {
      empty = [];
      errors = [];
      for (const q of queries) {
        const r = await query(q.expr);
        if (r.status !== 'success') errors.push(`${q.key}: ${r.error ?? r.status} [${q.expr}]`);
        else if ((r.data?.result.length ?? 0) === 0 && !(q.key in exceptions)) empty.push(`${q.key} [${q.expr}]`);
      }
      return empty.length === 0 && errors.length === 0 ? true : undefined;
    },
    timeoutMs,
    () => `${noun} without data:\n${empty.join('\n')}\nquery errors:\n${errors.join('\n')}`,
  );
}

/**
 * cbwatch for an end-to-end test: cluster `e2e` at `simUrl`, every collector polling every second (`collectors`
 * overriding some options), the search cancel policy in dry-run mode and the Sync Gateway webhook receiver on
 * for `webhookDb` (so the search-cancel and webhook panels have data), logging nothing.
 */
export function e2eCbwatchConfig(o: {
  simUrl: string;
  collectors: { [K in CollectorName]?: Record<string, unknown> };
  cluster?: Partial<ClusterConfig>;
  webhookDb: string;
  webhookToken: string;
}): Config {
  const raw: { [K in CollectorName]?: CollectorOptions<K> } = {};
  const set = <K extends CollectorName>(name: K, opts: Record<string, unknown>): void => {
    (raw as Record<K, CollectorOptions<K>>)[name] = collectorSchemas[name].parse({ interval: 1, ...opts }) as CollectorOptions<K>;
  };
  const overrides: { [K in CollectorName]?: Record<string, unknown> } = { search: { slow_query_threshold: 2, cancel: { enabled: true, dry_run: true, longer_than: 5 } }, ...o.collectors };
  for (const name of COLLECTOR_NAMES) set(name, overrides[name] ?? {});
  const { token_env: _env, token_file: _file, ...webhook } = webhookSchema.parse({ enabled: true, token_env: 'UNUSED', databases: [o.webhookDb], type_field: 'type' });
  return {
    clusters: [defaultClusterConfig({ ...o.cluster, name: 'e2e', url: o.simUrl, collectors: resolveCollectors(raw) })],
    webhooks: { syncGateway: { ...webhook, token: o.webhookToken } },
    web: { listenHost: '127.0.0.1', listenPort: 0, configFile: undefined },
    log: { level: 'silent', format: 'json' },
  };
}

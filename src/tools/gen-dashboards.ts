/**
 * Dashboard generator: assembles the nine cbwatch Grafana dashboards (one file each in dashboards/) and the
 * Grafana provisioning examples (dashboards/provisioning.ts).
 * `renderDashboards()` is pure; `generate.ts` writes its files and a test fails when they are stale.
 *
 * Conventions (STYLE.md): uid `cbwatch-<name>`, the shared tag `cbwatch` with a dashboards link by that tag,
 * a `datasource` variable, chained `couchbase_cluster` → `bucket` variables (label_values), `$__rate_interval`
 * in every rate, a unit and a description on every panel. Metric names are cbwatch's catalog names
 * (src/catalog.ts); a test checks every one of them.
 */
import type { Files } from './files.js';
import { dashboardJson, jsonText } from './grafana.js';
import type { DashboardSpec, Item } from './grafana.js';
import { buckets } from './dashboards/buckets.js';
import { certificates } from './dashboards/certificates.js';
import { exporter } from './dashboards/exporter.js';
import { index } from './dashboards/index.js';
import { nodes } from './dashboards/nodes.js';
import { overview } from './dashboards/overview.js';
import { dashboardProvisioning, datasourceProvisioning } from './dashboards/provisioning.js';
import { query } from './dashboards/query.js';
import { search } from './dashboards/search.js';
import { xdcr } from './dashboards/xdcr.js';

/** Every dashboard, by file stem. */
export const DASHBOARDS: Readonly<Record<string, DashboardSpec>> = {
  'cbwatch-overview': overview,
  'cbwatch-buckets': buckets,
  'cbwatch-nodes': nodes,
  'cbwatch-xdcr': xdcr,
  'cbwatch-certificates': certificates,
  'cbwatch-query': query,
  'cbwatch-index': index,
  'cbwatch-search': search,
  'cbwatch-exporter': exporter,
};

/** Items of all dashboards (for tests that walk the specs rather than the JSON). */
export function allItems(): { dashboard: string; item: Item }[] {
  return Object.entries(DASHBOARDS).flatMap(([dashboard, d]) => d.items.map((item) => ({ dashboard, item })));
}

export function renderDashboards(): Files {
  const files: Files = {};
  for (const [stem, spec] of Object.entries(DASHBOARDS)) files[`dashboards/${stem}.json`] = jsonText(dashboardJson(spec));
  files['dashboards/provisioning/datasources/cbwatch-prometheus.yml'] = datasourceProvisioning();
  files['dashboards/provisioning/dashboards/cbwatch.yml'] = dashboardProvisioning();
  return files;
}

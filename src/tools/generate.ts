/**
 * `npm run generate`: write the generated alert, dashboard, metric-reference and configuration-reference files. With `--check`, write nothing and exit 1
 * listing the stale files (CI uses it; the tests do the same comparison).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../paths.js';
import { renderConfigurationDoc } from './config-doc.js';
import { staleFiles, writeFiles } from './files.js';
import type { Files } from './files.js';
import { renderAlerts } from './gen-alerts.js';
import { renderBridge } from './gen-bridge.js';
import { renderDashboards } from './gen-dashboards.js';
import { renderDeploy } from './gen-deploy.js';
import { mixinDashboardsText } from './mixin.js';
import { renderMetricsDoc } from './metrics-doc.js';

export function renderAll(root: string = PACKAGE_ROOT): Files {
  const alerts = renderAlerts(root);
  const dashboards = renderDashboards();
  return {
    ...alerts,
    ...renderDeploy(alerts),
    ...renderBridge(),
    ...dashboards,
    'mixin/dashboards.libsonnet': mixinDashboardsText(Object.keys(dashboards)),
    'docs/metrics.md': renderMetricsDoc(),
    // Its prose is written by hand; the tables of flags, variables and cluster defaults come from the settings table.
    'docs/configuration.md': renderConfigurationDoc(readFileSync(join(root, 'docs', 'configuration.md'), 'utf8')),
  };
}

function main(argv: readonly string[]): number {
  const files = renderAll();
  if (argv.includes('--check')) {
    const stale = staleFiles(PACKAGE_ROOT, files);
    for (const f of stale) process.stderr.write(`stale: ${f} (run npm run generate)\n`);
    return stale.length ? 1 : 0;
  }
  const written = writeFiles(PACKAGE_ROOT, files);
  process.stdout.write(written.length ? written.map((f) => `wrote ${f}\n`).join('') : 'generated files are up to date\n');
  return 0;
}

process.exitCode = main(process.argv.slice(2));

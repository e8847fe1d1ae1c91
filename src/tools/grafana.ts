/**
 * A small, typed model of the Grafana dashboard JSON cbwatch generates (schemaVersion 39), and the builders
 * that keep every dashboard on the same conventions: a `datasource` variable, chained `couchbase_cluster` →
 * `bucket` variables, the shared `cbwatch` tag with cross-links, a unit and a description on every panel.
 * Only the fields cbwatch uses are modelled; Grafana fills in the rest with its defaults on load.
 *
 * Each file is both an import document and a provisioning file. `__inputs` makes Grafana's import dialog
 * offer a Prometheus picker whose choice replaces `${DS_PROMETHEUS}`: that string appears once, as the
 * current value of the `datasource` variable, and every panel, target and variable reads `${datasource}`.
 * A provisioned copy (where nothing replaces `${DS_PROMETHEUS}`) therefore still works: Grafana falls back
 * to the default Prometheus for a datasource variable whose current value names no data source.
 */

export const SCHEMA_VERSION = 39;
/** The oldest Grafana the JSON is written for (schemaVersion 39, table cellOptions, stat/bargauge options). */
export const GRAFANA_MIN_VERSION = '10.4.0';
export const SHARED_TAG = 'cbwatch';
export const DS = { type: 'prometheus', uid: '${datasource}' } as const;
/** The import input that picks the Prometheus data source. */
export const DS_INPUT = 'DS_PROMETHEUS';

export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

export interface Target {
  readonly expr: string;
  readonly legendFormat?: string;
  /** Table panels ask for the latest value only. */
  readonly instant?: boolean;
}

export interface ThresholdStep {
  readonly color: string;
  /** null: the base step. */
  readonly value: number | null;
}

/**
 * A data link to another cbwatch dashboard, carrying the time range, the data source and variables taken
 * from the clicked series (its labels) or table row (its columns).
 */
export interface DrillDown {
  readonly title: string;
  /** Target dashboard uid (`cbwatch-…`). */
  readonly uid: string;
  /** Target variable name → label (or table column) of the clicked item. */
  readonly vars: Readonly<Record<string, string>>;
}

export interface ValueMapping {
  readonly value: string;
  readonly text: string;
  readonly color: string;
}

export type PanelType = 'timeseries' | 'stat' | 'table' | 'bargauge' | 'state-timeline';

export interface PanelSpec {
  readonly type: PanelType;
  readonly title: string;
  readonly description: string;
  readonly unit: string;
  readonly targets: readonly Target[];
  /** Grid width (of 24) and height; defaults depend on the type. */
  readonly w?: number;
  readonly h?: number;
  readonly min?: number;
  readonly max?: number;
  readonly decimals?: number;
  readonly thresholds?: readonly ThresholdStep[];
  readonly mappings?: readonly ValueMapping[];
  /** timeseries: stack the series (shares of a whole). */
  readonly stack?: boolean;
  /** table: columns to hide and to rename, and the header of the value column. */
  readonly hideColumns?: readonly string[];
  readonly valueName?: string;
  /** Colour table cells / stat backgrounds by thresholds. */
  readonly colorByThreshold?: boolean;
  /** Text shown instead of "No data", for panels whose feature may be switched off (e.g. "off"). */
  readonly noValue?: string;
  /** Links from a clicked series or row to the dashboard of that bucket, replication or node. */
  readonly drillDown?: readonly DrillDown[];
}

export interface RowSpec {
  readonly row: string;
}

export type Item = PanelSpec | RowSpec;

export interface VariableSpec {
  readonly name: string;
  readonly label: string;
  /** `label_values(...)` query. */
  readonly query: string;
  readonly multi?: boolean;
}

export interface DashboardSpec {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly variables: readonly VariableSpec[];
  readonly items: readonly Item[];
  readonly refresh?: string;
  readonly time?: string;
}

/** Thresholds for "seconds left" style values: red under 7 days, orange under 28, green above. */
export const EXPIRY_STEPS: readonly ThresholdStep[] = [
  { color: 'red', value: null },
  { color: 'orange', value: 7 * 86400 },
  { color: 'green', value: 28 * 86400 },
];

export const OK_FAIL: readonly ValueMapping[] = [
  { value: '1', text: 'OK', color: 'green' },
  { value: '0', text: 'FAILED', color: 'red' },
];

export const ON_OFF_GOOD: readonly ValueMapping[] = [
  { value: '1', text: 'on', color: 'green' },
  { value: '0', text: 'off', color: 'orange' },
];

export const ON_OFF_BAD: readonly ValueMapping[] = [
  { value: '1', text: 'on', color: 'orange' },
  { value: '0', text: 'off', color: 'green' },
];

/** The cluster variable every dashboard has. */
export const CLUSTER_VAR: VariableSpec = {
  name: 'couchbase_cluster',
  label: 'Cluster',
  query: 'label_values(couchbase_up, couchbase_cluster)',
  multi: true,
};

/** The bucket variable, chained to the cluster. */
export const BUCKET_VAR: VariableSpec = {
  name: 'bucket',
  label: 'Bucket',
  query: 'label_values(couchbase_bucket_info{couchbase_cluster=~"$couchbase_cluster"}, bucket)',
  multi: true,
};

export function isRow(i: Item): i is RowSpec {
  return 'row' in i;
}

const DEFAULT_SIZE: Record<PanelType, { w: number; h: number }> = {
  timeseries: { w: 12, h: 8 },
  stat: { w: 6, h: 4 },
  table: { w: 24, h: 8 },
  bargauge: { w: 12, h: 8 },
  'state-timeline': { w: 24, h: 8 },
};

function variableJson(v: VariableSpec): Json {
  return {
    name: v.name,
    label: v.label,
    type: 'query',
    datasource: { ...DS },
    query: { query: v.query, refId: `${v.name}-variable` },
    definition: v.query,
    refresh: 2,
    includeAll: true,
    multi: v.multi ?? true,
    allValue: '.*',
    current: {},
    options: [],
    regex: '',
    sort: 1,
    hide: 0,
  };
}

function datasourceVariable(): Json {
  return {
    name: 'datasource',
    label: 'Data source',
    type: 'datasource',
    query: 'prometheus',
    // The import dialog replaces this with the chosen data source's uid (see the header comment).
    current: { selected: false, text: '${' + DS_INPUT + '}', value: '${' + DS_INPUT + '}' },
    options: [],
    regex: '',
    refresh: 1,
    hide: 0,
    includeAll: false,
    multi: false,
  };
}

function thresholdsJson(steps: readonly ThresholdStep[] | undefined): Json {
  return { mode: 'absolute', steps: (steps ?? [{ color: 'green', value: null }]).map((s) => ({ color: s.color, value: s.value })) };
}

function mappingsJson(m: readonly ValueMapping[] | undefined): Json[] {
  if (!m || m.length === 0) return [];
  const options: Record<string, Json> = {};
  m.forEach((x, index) => (options[x.value] = { text: x.text, color: x.color, index }));
  return [{ type: 'value', options }];
}

const REF = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

function targetsJson(p: PanelSpec): Json[] {
  return p.targets.map((t, i) => {
    const instant = t.instant ?? p.type === 'table';
    return {
      datasource: { ...DS },
      refId: REF[i] ?? `Q${i}`,
      expr: t.expr,
      legendFormat: t.legendFormat ?? '__auto',
      range: !instant,
      instant,
      ...(p.type === 'table' ? { format: 'table' } : {}),
      editorMode: 'code',
    };
  });
}

function optionsJson(p: PanelSpec): Json {
  const reduce = { calcs: ['lastNotNull'], fields: '', values: false };
  switch (p.type) {
    case 'timeseries':
      return {
        legend: { displayMode: 'table', placement: 'bottom', showLegend: true, calcs: ['lastNotNull', 'max'] },
        tooltip: { mode: 'multi', sort: 'desc' },
      };
    case 'stat':
      return {
        reduceOptions: reduce,
        colorMode: p.colorByThreshold ? 'background' : 'value',
        graphMode: 'none',
        justifyMode: 'auto',
        orientation: 'auto',
        textMode: 'auto',
        wideLayout: true,
        showPercentChange: false,
      };
    case 'bargauge':
      return {
        reduceOptions: reduce,
        orientation: 'horizontal',
        displayMode: 'gradient',
        showUnfilled: true,
        valueMode: 'color',
        namePlacement: 'auto',
        sizing: 'auto',
        minVizHeight: 16,
        minVizWidth: 8,
        maxVizHeight: 300,
      };
    case 'table':
      return { showHeader: true, cellHeight: 'sm', footer: { show: false, reducer: ['sum'], countRows: false, fields: '' } };
    case 'state-timeline':
      return {
        showValue: 'auto',
        rowHeight: 0.9,
        mergeValues: true,
        alignValue: 'left',
        legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
        tooltip: { mode: 'single', sort: 'none' },
      };
  }
}

function customJson(p: PanelSpec): Json | undefined {
  if (p.type === 'timeseries') {
    return {
      drawStyle: 'line',
      lineWidth: 1,
      fillOpacity: p.stack ? 30 : 10,
      gradientMode: 'none',
      showPoints: 'never',
      spanNulls: false,
      axisSoftMin: 0,
      stacking: { mode: p.stack ? 'normal' : 'none', group: 'A' },
      thresholdsStyle: { mode: p.thresholds ? 'line' : 'off' },
    };
  }
  if (p.type === 'table') return { align: 'auto', cellOptions: { type: 'auto' }, inspect: false };
  if (p.type === 'state-timeline') return { lineWidth: 0, fillOpacity: 80 };
  return undefined;
}

/**
 * Grafana data link URL to a dashboard by uid. Series carry labels (`${__field.labels.x}`); table rows carry
 * columns (`${__data.fields.x}`). `${datasource:queryparam}` and `${__url_time_range}` keep the data source
 * and time range; every value is URL-encoded by Grafana's `:percentencode` format.
 */
export function drillDownUrl(d: DrillDown, table: boolean): string {
  const params = ['${__url_time_range}', '${datasource:queryparam}'];
  for (const [name, label] of Object.entries(d.vars)) {
    const ref = table ? `__data.fields["${label}"]` : `__field.labels.${label}`;
    params.push(`var-${name}=\${${ref}:percentencode}`);
  }
  return `/d/${d.uid}?${params.join('&')}`;
}

function panelJson(p: PanelSpec, id: number, gridPos: Json): Json {
  const custom = customJson(p);
  const defaults: Record<string, Json> = {
    unit: p.unit,
    color: { mode: p.thresholds || p.mappings ? 'thresholds' : 'palette-classic' },
    thresholds: thresholdsJson(p.thresholds),
    mappings: mappingsJson(p.mappings),
  };
  if (p.min !== undefined) defaults.min = p.min;
  if (p.max !== undefined) defaults.max = p.max;
  if (p.decimals !== undefined) defaults.decimals = p.decimals;
  if (p.noValue !== undefined) defaults.noValue = p.noValue;
  if (p.drillDown?.length) defaults.links = p.drillDown.map((d) => ({ title: d.title, url: drillDownUrl(d, p.type === 'table'), targetBlank: false }));
  if (custom !== undefined) defaults.custom = custom;
  const overrides: Json[] = [];
  const transformations: Json[] = [];
  if (p.type === 'table') {
    const exclude: Record<string, Json> = { Time: true, __name__: true, job: true, instance: true };
    for (const c of p.hideColumns ?? []) exclude[c] = true;
    const value = p.valueName ?? 'Value';
    transformations.push({ id: 'organize', options: { excludeByName: exclude, renameByName: { Value: value }, indexByName: {} } });
    if (p.colorByThreshold) {
      overrides.push({
        matcher: { id: 'byName', options: value },
        properties: [{ id: 'custom.cellOptions', value: { type: 'color-background', mode: 'basic' } }],
      });
    }
  }
  return {
    id,
    type: p.type,
    title: p.title,
    description: p.description,
    datasource: { ...DS },
    gridPos,
    targets: targetsJson(p),
    fieldConfig: { defaults, overrides },
    options: optionsJson(p),
    ...(transformations.length ? { transformations } : {}),
  };
}

/** Lay panels out left to right on the 24-column grid; a row starts a new line. */
function layout(items: readonly Item[]): Json[] {
  const out: Json[] = [];
  let x = 0;
  let y = 0;
  let lineH = 0;
  let id = 1;
  for (const item of items) {
    if (isRow(item)) {
      if (x > 0) {
        y += lineH;
        x = 0;
        lineH = 0;
      }
      out.push({ id: id++, type: 'row', title: item.row, collapsed: false, gridPos: { x: 0, y, w: 24, h: 1 }, panels: [] });
      y += 1;
      continue;
    }
    const size = DEFAULT_SIZE[item.type];
    const w = item.w ?? size.w;
    const h = item.h ?? size.h;
    if (x + w > 24) {
      y += lineH;
      x = 0;
      lineH = 0;
    }
    out.push(panelJson(item, id++, { x, y, w, h }));
    x += w;
    lineH = Math.max(lineH, h);
  }
  return out;
}

const PANEL_NAMES: Record<PanelType, string> = {
  timeseries: 'Time series',
  stat: 'Stat',
  table: 'Table',
  bargauge: 'Bar gauge',
  'state-timeline': 'State timeline',
};

/** What Grafana's import dialog shows and checks: the inputs to choose and the plugins needed. */
function importHeader(d: DashboardSpec): Record<string, Json> {
  const types = [...new Set(d.items.filter((i): i is PanelSpec => !isRow(i)).map((p) => p.type))].sort();
  return {
    __inputs: [
      {
        name: DS_INPUT,
        label: 'Prometheus',
        description: 'The Prometheus that scrapes cbwatch',
        type: 'datasource',
        pluginId: 'prometheus',
        pluginName: 'Prometheus',
      },
    ],
    __elements: {},
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: GRAFANA_MIN_VERSION },
      { type: 'datasource', id: 'prometheus', name: 'Prometheus', version: '1.0.0' },
      ...types.map((t) => ({ type: 'panel', id: t, name: PANEL_NAMES[t], version: '' })),
    ],
  };
}

export function dashboardJson(d: DashboardSpec): Json {
  return {
    ...importHeader(d),
    uid: d.uid,
    title: d.title,
    description: d.description,
    tags: [SHARED_TAG, ...d.tags],
    id: null,
    version: 1,
    schemaVersion: SCHEMA_VERSION,
    editable: true,
    graphTooltip: 1,
    liveNow: false,
    fiscalYearStartMonth: 0,
    timezone: 'browser',
    time: { from: d.time ?? 'now-6h', to: 'now' },
    timepicker: {},
    refresh: d.refresh ?? '30s',
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    links: [
      {
        title: 'cbwatch dashboards',
        type: 'dashboards',
        tags: [SHARED_TAG],
        asDropdown: true,
        includeVars: true,
        keepTime: true,
        icon: 'external link',
        targetBlank: false,
        tooltip: '',
        url: '',
      },
    ],
    templating: { list: [datasourceVariable(), ...d.variables.map(variableJson)] },
    panels: layout(d.items),
  };
}

/** Stable JSON text: two-space indentation, keys in the order written, trailing newline. */
export function jsonText(v: Json): string {
  return `${JSON.stringify(v, null, 2)}\n`;
}

/** Every PromQL expression of a dashboard JSON: panel targets and variable queries. */
export function dashboardExprs(d: Json): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  const obj = d as { templating?: { list?: { name: string; type: string; definition?: string }[] }; panels?: { title: string; targets?: { expr: string }[] }[] };
  for (const v of obj.templating?.list ?? []) if (v.type === 'query' && v.definition) out.push({ where: `variable ${v.name}`, expr: v.definition });
  for (const p of obj.panels ?? []) for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}"`, expr: t.expr });
  return out;
}

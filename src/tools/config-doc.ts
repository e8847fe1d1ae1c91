/**
 * The generated parts of docs/configuration.md, from the settings table (src/config/settings.ts): the flag table,
 * the flags that have no environment variable and why, the environment table, and the type and default cells of
 * the per-cluster keys that have a row in the table. The prose around them stays as written; each generated part
 * sits between `<!-- generated: NAME -->` and `<!-- /generated: NAME -->`.
 */
import { SWITCH_COMMANDS, commandsOf } from '../config/help.js';
import { CLUSTER_SETTINGS, OTHER_ENV_VARS, SETTING_ROWS, clusterSettingCells, defaultText } from '../config/settings.js';
import type { Setting } from '../config/settings.js';

/** A default as the docs write it: a value in backticks, words (`off`, `system CAs`) as they are. */
function defaultCell(s: Setting): string {
  const d = defaultText(s);
  if (d === undefined) return '—';
  const shown = /^[\w.:/-]+$/.test(d) && d !== 'off' ? `\`${d}\`` : d;
  return s.defaultNote === undefined ? shown : `${shown} ${s.defaultNote}`;
}

function flagCell(s: Setting): string {
  if (s.flag === undefined) return '*(no flag, on purpose)*';
  const flag = `\`--${s.flag}${s.metavar === undefined ? '' : ` ${s.metavar}`}\``;
  return s.short === undefined ? flag : `${flag}, \`-${s.short}\``;
}

/** The table under "## Command line". */
export function flagTable(): string {
  const rows = ['| flag | commands | default | environment | meaning |', '|---|---|---|---|---|'];
  for (const [, s] of SETTING_ROWS) {
    if (s.flag === 'help') {
      rows.push(
        `| \`--[no-]collector.<name>\` | ${commandsOf('collector', SWITCH_COMMANDS)?.join(', ')} | — | \`CBWATCH_COLLECTOR_<NAME>\` | switch a collector on or off for every cluster ([Switching collectors](#switching-collectors)) |`,
      );
    }
    const commands = s.flag === undefined ? '' : (commandsOf(s.flag, s.commands)?.join(', ') ?? 'all');
    rows.push(`| ${flagCell(s)} | ${commands} | ${defaultCell(s)} | ${s.env === undefined ? '—' : `\`${s.env}\``} | ${s.doc ?? s.help} |`);
  }
  return tidy(rows);
}

/** Table rows with an empty cell written `| |`, as by hand. */
function tidy(rows: readonly string[]): string {
  return rows.map((r) => r.replace(/\| {2}\|/g, '| |')).join('\n');
}

/** The flags without an environment variable, each with its reason, one line per reason. */
export function noEnvList(): string {
  const byReason = new Map<string, string[]>();
  for (const [, s] of SETTING_ROWS) {
    if (s.flag === undefined || s.env !== undefined) continue;
    byReason.set(s.noEnv ?? '', [...(byReason.get(s.noEnv ?? '') ?? []), `\`--${s.flag}\``]);
  }
  const lines = [...byReason].map(([reason, flags]) => `- ${flags.join(', ')}: ${reason}.`);
  return ['Flags without an environment variable, and why:', '', ...lines].join('\n');
}

/** The table under "## Environment variables". */
export function envTable(): string {
  const rows = ['| variable | same as | notes |', '|---|---|---|'];
  for (const [, s] of SETTING_ROWS) {
    if (s.env === undefined) continue;
    rows.push(`| \`${s.env}\` | ${s.flag === undefined ? '—' : `\`--${s.flag}\``} | ${s.envNote ?? (s.flag === undefined ? (s.doc ?? s.help) : '')} |`);
  }
  for (const [name, v] of Object.entries(OTHER_ENV_VARS)) rows.push(`| \`${name}\` | ${v.sameAs} | ${v.note} |`);
  return tidy(rows);
}

const PARTS: Record<string, () => string> = { flags: flagTable, 'flags-without-env': noEnvList, env: envTable };

/** docs/configuration.md with its generated parts renewed; throws when a marker is missing. */
export function renderConfigurationDoc(current: string): string {
  let doc = current;
  for (const [name, render] of Object.entries(PARTS)) {
    const open = `<!-- generated: ${name} (npm run generate, from src/config/settings.ts) -->\n`;
    const close = `\n<!-- /generated: ${name} -->`;
    const a = doc.indexOf(open);
    const b = doc.indexOf(close, a);
    if (a < 0 || b < 0) throw new Error(`docs/configuration.md: the markers of the generated part "${name}" are missing`);
    doc = doc.slice(0, a + open.length) + render() + doc.slice(b);
  }
  // The per-cluster keys: their type and default cells in the `clusters[]` table.
  for (const [key, s] of Object.entries(CLUSTER_SETTINGS)) {
    const cells = clusterSettingCells(s);
    const row = new RegExp(`^\\| \`${key}\` \\| [^|\\n]+ \\| [^|\\n]+ \\|`, 'm');
    if (!row.test(doc)) throw new Error(`docs/configuration.md: no row for clusters[].${key}`);
    doc = doc.replace(row, `| \`${key}\` | ${cells.type} | ${cells.default} |`);
  }
  return doc;
}

/**
 * Shared by the configuration file and the web config file: read YAML with positions, and turn zod issues
 * into one ConfigError whose lines each name the file, line:column, the key path and the reason, e.g.
 * `cbwatch.yml:7:9: clusters[0].collectors.search.slow_query_threshold: invalid duration "10x" (…)`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { closest } from './flags.js';

export type PathSegment = PropertyKey;

let yamlModule: typeof Yaml | undefined;

/**
 * The yaml package, loaded on the first file read: a daemon configured by flags and the environment alone never
 * parses YAML, and the package's 69 modules would otherwise sit in the HTTP thread's heap for the process's
 * life. Its `node` entry is CommonJS, so a synchronous require returns the same module an import would.
 */
function yaml(): typeof Yaml {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml);
}

export interface Position {
  readonly line: number;
  readonly col: number;
}

export interface YamlData {
  /** The document as plain data; undefined for an empty file. */
  readonly value: unknown;
  /** Where a key path sits in the file (the deepest part of it that exists). */
  locate(path: readonly PathSegment[]): Position | undefined;
}

/** Reads and parses a YAML file; `what` names the setting that pointed at it (for a missing file). */
export function parseYamlFile(file: string, what: string): YamlData {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'unreadable';
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : code;
    throw new ConfigError(`${what}: cannot read ${JSON.stringify(file)} (${why})`);
  }
  return parseYamlText(text, file);
}

export function parseYamlText(text: string, file: string): YamlData {
  const { LineCounter, isMap, isScalar, isSeq, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const pos = lineCounter.linePos(first.pos[0]);
    const msg = (first.message.split('\n', 1)[0] ?? '').replace(/\s+at line \d+, column \d+:?$/, '');
    const more = doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more)` : '';
    throw new ConfigError(`${file}:${pos.line}:${pos.col}: YAML syntax error: ${msg}${more}`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    throw new ConfigError(`${file}: YAML error: ${err instanceof Error ? err.message : String(err)}`);
  }
  const locate = (path: readonly PathSegment[]): Position | undefined => {
    let node: unknown = doc.contents;
    let at: number | undefined = rangeStart(node);
    for (const seg of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (pair === undefined) break;
        at = rangeStart(pair.key) ?? at;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        const item: unknown = node.items[seg];
        if (item === undefined) break;
        at = rangeStart(item) ?? at;
        node = item;
      } else break;
    }
    return at === undefined ? undefined : lineCounter.linePos(at);
  };
  return { value: value ?? undefined, locate };
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as { range?: unknown } | null | undefined)?.range;
  return Array.isArray(range) && typeof range[0] === 'number' ? range[0] : undefined;
}

/** `clusters[0].collectors.search.slow_query_threshold`; `(top level)` for the root. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const s = String(seg);
      out += /^[A-Za-z_][\w-]*$/.test(s) ? (out === '' ? s : `.${s}`) : `[${JSON.stringify(s)}]`;
    }
  }
  return out === '' ? '(top level)' : out;
}

type Def = { type?: string; innerType?: unknown; in?: unknown; element?: unknown; shape?: Record<string, unknown>; valueType?: unknown };

/** The keys a strict object at `path` of `schema` accepts (for "unknown key … (allowed: …)"). */
export function keysAt(schema: unknown, path: readonly PathSegment[]): string[] | undefined {
  let s: unknown = schema;
  let i = 0;
  for (let guard = 0; guard < 100; guard++) {
    const def = (s as { def?: Def } | undefined)?.def;
    if (def === undefined) return undefined;
    switch (def.type) {
      case 'optional':
      case 'default':
      case 'prefault':
      case 'nullable':
        s = def.innerType;
        continue;
      case 'pipe':
        s = def.in;
        continue;
      case 'array':
        if (i >= path.length) return undefined;
        i++;
        s = def.element;
        continue;
      case 'record':
        if (i >= path.length) return undefined;
        i++;
        s = def.valueType;
        continue;
      case 'object': {
        const shape = def.shape ?? (s as { shape?: Record<string, unknown> }).shape;
        if (shape === undefined) return undefined;
        if (i >= path.length) return Object.keys(shape);
        s = shape[String(path[i])];
        i++;
        continue;
      }
      default:
        return undefined;
    }
  }
  return undefined;
}

export interface IssueLike {
  readonly code?: string;
  readonly path: readonly PathSegment[];
  readonly message: string;
  readonly keys?: readonly string[];
}

/** One line per problem, each with file:line:col, key path and reason. */
export function issueLines(
  file: string,
  issues: readonly IssueLike[],
  locate: YamlData['locate'],
  schema?: z.ZodType,
  unknownKeyHint?: (path: readonly PathSegment[], key: string) => string | undefined,
): string[] {
  const lines: string[] = [];
  const where = (p: readonly PathSegment[]) => {
    const pos = locate(p);
    return pos === undefined ? `${file}: ` : `${file}:${pos.line}:${pos.col}: `;
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys' && issue.keys !== undefined) {
      for (const key of issue.keys) {
        const p = [...issue.path, key];
        const custom = unknownKeyHint?.(issue.path, key);
        let reason = custom;
        if (reason === undefined) {
          const allowed = schema === undefined ? undefined : keysAt(schema, issue.path);
          const guess = allowed === undefined ? undefined : closest(key, allowed);
          reason =
            'unknown key' +
            (guess !== undefined ? ` (did you mean "${guess}"?)` : allowed !== undefined ? ` (allowed: ${allowed.join(', ')})` : '');
        }
        lines.push(`${where(p)}${formatPath(p)}: ${reason}`);
      }
    } else {
      lines.push(`${where(issue.path)}${formatPath(issue.path)}: ${issue.message}`);
    }
  }
  return [...new Set(lines)];
}

export function linesToConfigError(file: string, lines: readonly string[]): ConfigError {
  if (lines.length === 1) return new ConfigError(`invalid configuration: ${lines[0] as string}`);
  // In file order: problems with a `file:line:col:` position by position, the others after them as found.
  const at = (l: string): number => {
    const m = /^[^\n]*?:(\d+):(\d+): /.exec(l);
    return m ? Number(m[1]) * 100_000 + Number(m[2]) : Number.MAX_SAFE_INTEGER;
  };
  const ordered = lines.map((l, i) => ({ l, i, at: at(l) })).sort((a, b) => a.at - b.at || a.i - b.i).map((x) => x.l);
  return new ConfigError(`invalid configuration in ${file} (${lines.length} problems):\n  ${ordered.join('\n  ')}`);
}

export function zodIssuesToConfigError(
  file: string,
  issues: readonly IssueLike[],
  locate: YamlData['locate'],
  schema?: z.ZodType,
  unknownKeyHint?: (path: readonly PathSegment[], key: string) => string | undefined,
): ConfigError {
  return linesToConfigError(file, issueLines(file, issues, locate, schema, unknownKeyHint));
}

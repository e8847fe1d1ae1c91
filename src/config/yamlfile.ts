/**
 * Shared by the configuration file and the web config file: read YAML with positions, and turn zod issues
 * into one ConfigError whose lines each name the file, line:column, the key path and the reason, e.g.
 * `cbwatch.yml:7:9: clusters[0].collectors.search.slow_query_threshold: invalid duration "10x" (…)`.
 */
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { closest } from './suggest.js';

export type PathSegment = PropertyKey;

/**
 * A configuration file's nodes (every mapping, sequence, key and value) counted after alias expansion: an alias
 * counts the nodes it stands for, as validation walks them. The limit is far above a 1,000-cluster file (about 30
 * nodes per cluster with its collectors' settings); a small file whose aliases expand to more would cost
 * validation time and memory out of proportion to its size, so it is refused before validation.
 */
export const MAX_YAML_NODES = 2_000_000;
/**
 * Nodes a file may hold as written (scalars and flow collections, counted by the YAML lexer before anything is
 * built): the parser's document costs memory per node, so a small file of `1,1,1,…` would cost far more than its
 * size. The limit is about 10,000 ordinary clusters (docs/configuration.md and bench/RESULTS.md give the costs).
 */
export const MAX_YAML_SOURCE_NODES = 250_000;
/** Largest configuration or web config file read (well above a typical file of 1,000 clusters). */
export const MAX_YAML_FILE_BYTES = 4 * 1024 * 1024;
/** Problems listed one by one in a configuration error; the rest are counted. */
export const MAX_PROBLEM_LINES = 100;

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
    const size = statSync(file).size;
    if (size > MAX_YAML_FILE_BYTES) throw new ConfigError(`${what}: ${JSON.stringify(file)} is ${size} bytes, above the limit of ${MAX_YAML_FILE_BYTES} (4 MiB)`);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as { code?: string }).code ?? 'unreadable';
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : code;
    throw new ConfigError(`${what}: cannot read ${JSON.stringify(file)} (${why})`);
  }
  return parseYamlText(text, file);
}

export function parseYamlText(text: string, file: string): YamlData {
  const { Lexer, LineCounter, isAlias, isMap, isPair, isScalar, isSeq, parseDocument } = yaml();
  // Counted before the parse, which costs memory per node: the lexer keeps nothing but the token at hand.
  let written = 0;
  for (const token of new Lexer().lex(text)) {
    const c = token.charCodeAt(0);
    // A plain scalar's marker (0x1f), a quoted scalar, a block scalar's header, a flow collection.
    if (c === 0x1f || c === 0x22 || c === 0x27 || c === 0x7c || c === 0x3e || token === '{' || token === '[') {
      if (++written > MAX_YAML_SOURCE_NODES) {
        throw new ConfigError(`${file}: YAML error: more than ${MAX_YAML_SOURCE_NODES} nodes as written (a configuration of 1,000 clusters has about 30,000)`);
      }
    }
  }
  const lineCounter = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    // Duplicate keys are found below, in one pass: the parser's own check compares each key with every earlier
    // one of its mapping, which is quadratic in a large mapping.
    doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  } catch (err) {
    // A document nested deeper than the parser's stack (RangeError) is a bad file, not a crash.
    throw new ConfigError(`${file}: YAML error: ${err instanceof RangeError ? 'nested too deeply' : err instanceof Error ? err.message : String(err)}`);
  }
  const first = doc.errors[0];
  if (first !== undefined) {
    const pos = lineCounter.linePos(first.pos[0]);
    const msg = (first.message.split('\n', 1)[0] ?? '').replace(/\s+at line \d+, column \d+:?$/, '');
    const more = doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more)` : '';
    throw new ConfigError(`${file}:${pos.line}:${pos.col}: YAML syntax error: ${msg}${more}`);
  }
  // Sized before anything walks the aliases' expansion (toJS shares an alias's value, but validation visits it
  // once per alias). Each node's size is computed once, so this costs the size of the file, not of its expansion.
  const sizes = new Map<unknown, number>();
  const open = new Set<unknown>();
  const expanded = (node: unknown): number => {
    if (isAlias(node)) return expanded(node.resolve(doc));
    if (!isMap(node) && !isSeq(node)) return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (open.has(node)) throw new ConfigError(`${file}: YAML error: an alias refers to a node that contains it`);
    open.add(node);
    let n = 1;
    const keys = isMap(node) ? new Set<string>() : undefined;
    for (const item of node.items as unknown[]) {
      if (keys !== undefined && isPair(item) && isScalar(item.key)) {
        // Equal as the parser's check has them: scalars of the same value (1 and "1" differ).
        const v: unknown = item.key.value;
        const id = `${typeof v}:${String(v)}`;
        if (keys.has(id)) {
          const at = rangeStart(item.key);
          const pos = at === undefined ? undefined : lineCounter.linePos(at);
          throw new ConfigError(`${file}:${pos === undefined ? '' : `${pos.line}:${pos.col}:`} YAML syntax error: Map keys must be unique`);
        }
        keys.add(id);
      }
      n += isPair(item) ? expanded(item.key) + expanded(item.value) : expanded(item);
      if (n > MAX_YAML_NODES) break;
    }
    open.delete(node);
    sizes.set(node, n);
    return n;
  };
  let nodes: number;
  try {
    nodes = expanded(doc.contents);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${file}: YAML error: ${err instanceof RangeError ? 'nested too deeply' : err instanceof Error ? err.message : String(err)}`);
  }
  if (nodes > MAX_YAML_NODES) {
    throw new ConfigError(`${file}: YAML error: more than ${MAX_YAML_NODES} nodes once its aliases are expanded (a configuration of 1,000 clusters has about 30,000)`);
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
  const lines = new Set<string>();
  const where = (p: readonly PathSegment[]) => {
    const pos = locate(p);
    return pos === undefined ? `${file}: ` : `${file}:${pos.line}:${pos.col}: `;
  };
  // Each problem costs a position lookup and a "did you mean" search: past the ones listed, the rest are only
  // counted, so that a file of a million unknown keys costs no more than one of a hundred.
  let total = 0;
  for (const issue of issues) total += issue.code === 'unrecognized_keys' && issue.keys !== undefined ? issue.keys.length : 1;
  let described = 0;
  for (const issue of issues) {
    if (lines.size >= MAX_PROBLEM_LINES) break;
    if (issue.code === 'unrecognized_keys' && issue.keys !== undefined) {
      for (const key of issue.keys) {
        if (lines.size >= MAX_PROBLEM_LINES) break;
        described++;
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
        lines.add(`${where(p)}${formatPath(p)}: ${reason}`);
      }
    } else {
      described++;
      lines.add(`${where(issue.path)}${formatPath(issue.path)}: ${issue.message}`);
    }
  }
  return described < total ? [...lines, `(and ${total - described} more problems)`] : [...lines];
}

export function linesToConfigError(file: string, all: readonly string[]): ConfigError {
  if (all.length === 1) return new ConfigError(`invalid configuration: ${all[0] as string}`);
  // A file of a million bad entries makes a million problems: the first ones are listed, the rest counted.
  const more = /^\(and (\d+) more problems\)$/.exec(all[all.length - 1] ?? '');
  const total = more ? all.length - 1 + Number(more[1]) : all.length;
  if (total === 1) return new ConfigError(`invalid configuration: ${all[0] as string}`);
  const lines = more ? all : all.length > MAX_PROBLEM_LINES ? [...all.slice(0, MAX_PROBLEM_LINES), `(and ${all.length - MAX_PROBLEM_LINES} more problems)`] : all;
  // In file order: problems with a `file:line:col:` position by position, the others after them as found.
  const at = (l: string): number => {
    const m = /^[^\n]*?:(\d+):(\d+): /.exec(l);
    return m ? Number(m[1]) * 100_000 + Number(m[2]) : Number.MAX_SAFE_INTEGER;
  };
  const ordered = lines.map((l, i) => ({ l, i, at: at(l) })).sort((a, b) => a.at - b.at || a.i - b.i).map((x) => x.l);
  return new ConfigError(`invalid configuration in ${file} (${total} problems):\n  ${ordered.join('\n  ')}`);
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

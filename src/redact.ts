/**
 * The redactor every piece of upstream text passes before it may reach an error message, a log line,
 * `cbwatch check` or a page. An error body is written by whatever answered (Couchbase, or a proxy that echoes
 * the request's headers), so it can hold our own credentials or the cluster's (LDAP `bindPass`).
 *
 * Two layers: the known secrets of this process (registered when the configuration is read) in their plain,
 * URL-encoded and base64 forms; and patterns for credential-looking text whatever its value (Authorization
 * headers, password/token/secret/key fields in JSON and key=value form, userinfo in URLs).
 */

export const REDACTED = '[redacted]';

/** Secrets shorter than this are not registered (and so not redacted): see `Redactor.add`. */
export const MIN_SECRET_LENGTH = 4;

/** Field names whose values are never shown (matched case-insensitively, anywhere in the name). */
const SECRET_FIELD = '[\\w.-]*(?:pass(?:word|wd|phrase)?|pwd|token|secret|key|authorization|cookie|credential|auth)[\\w.-]*';

const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  // HTTP header lines, in any casing, with or without a scheme word: `Authorization: Basic abc=`.
  [/\b((?:proxy-)?authorization|cookie|set-cookie|x-api-key)(\s*[:=]\s*)(?:(?:basic|bearer|digest|negotiate|token)\s+)?[^\s,;"'}\]]+/gi, `$1$2${REDACTED}`],
  // A bare scheme + credentials anywhere (an echo that lost the header name).
  [/\b(basic|bearer)\s+[A-Za-z0-9+/=._~-]{6,}/gi, `$1 ${REDACTED}`],
  // JSON string or scalar values of secret-looking fields: "bindPass": "x", "apiKey": 12.
  [new RegExp(`("${SECRET_FIELD}"\\s*:\\s*)(?:"(?:[^"\\\\]|\\\\.)*"|[^,}\\]\\s]+)`, 'gi'), `$1"${REDACTED}"`],
  // key=value and key: value forms (query strings, form bodies, logfmt, Erlang terms printed as text).
  [new RegExp(`\\b(${SECRET_FIELD})(\\s*(?:=|:)\\s*)(?!\\[redacted\\])("(?:[^"\\\\]|\\\\.)*"|'[^']*'|<<"[^"]*">>|[^\\s&,;}\\]"']+)`, 'gi'), `$1$2${REDACTED}`],
  // Erlang tuples as ns_server prints them in 500 bodies: {bindPass,<<"x">>} or {password,"x"}.
  [new RegExp(`(\\{\\s*'?(?:${SECRET_FIELD})'?\\s*,\\s*)(?:<<"[^"]*">>|"(?:[^"\\\\]|\\\\.)*"|'[^']*'|[^}]+)`, 'gi'), `$1${REDACTED}`],
  // Userinfo in a URL: scheme://user:pass@host.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]*:[^\s/@]*@/gi, `$1${REDACTED}@`],
];

/** A word at least one of PATTERNS needs to match (a quick test before running them all). */
const PATTERN_WORDS = /pass|pwd|token|secret|key|auth|cookie|credential|basic|bearer|:\/\//i;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The base64 forms under which `secret` can appear inside a longer base64 string (e.g. the `user:password`
 * of a Basic header): one per alignment (0, 1 or 2 bytes before it), keeping only the characters that
 * depend on the secret alone.
 */
export function base64Variants(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const out: string[] = [];
  for (let pad = 0; pad < 3; pad++) {
    const enc = Buffer.concat([Buffer.alloc(pad, 0x41), bytes]).toString('base64');
    // Character i carries bits [6i, 6i+6): keep those that lie wholly inside the secret's bytes.
    const core = enc.slice(Math.ceil((pad * 8) / 6), Math.floor(((pad + bytes.length) * 8) / 6));
    if (core.length >= 6) out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return out;
}

export class Redactor {
  private readonly literals = new Set<string>();
  private matcher: RegExp | undefined;

  /**
   * Registers a secret: it and its encoded forms are replaced wherever they appear. Values of 1–3 characters
   * are not registered (docs/security.md, "Limits"): replacing every `ab` would blank ordinary text, and so
   * short a password is no protection anyway.
   */
  add(secret: string | undefined): this {
    if (secret === undefined || secret.length < MIN_SECRET_LENGTH) return this;
    const json = JSON.stringify(secret).slice(1, -1);
    const forms = [
      secret,
      encodeURIComponent(secret),
      // Percent-encoding with lower-case hex, and with the characters encodeURIComponent leaves as they are.
      encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      encodeURIComponent(secret).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
      // Form encoding (application/x-www-form-urlencoded): spaces as `+`.
      new URLSearchParams({ s: secret }).toString().slice(2),
      Buffer.from(secret, 'utf8').toString('base64').replace(/=+$/, ''),
      json,
      // JSON encoders that escape `/` or every non-ASCII character.
      json.replace(/\//g, '\\/'),
      json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
      ...base64Variants(secret),
    ];
    for (const f of forms) if (f.length >= MIN_SECRET_LENGTH) this.literals.add(f);
    this.matcher = undefined;
    return this;
  }

  /**
   * The length of the longest end of `text` that is the beginning (not the whole) of a registered secret
   * form: what a cut at the end of `text` would leave of a secret that goes on past it.
   */
  splitTail(text: string): number {
    let best = 0;
    for (const l of this.literals) {
      for (let k = Math.min(l.length - 1, text.length); k > best; k--) {
        if (text.endsWith(l.slice(0, k))) {
          best = k;
          break;
        }
      }
    }
    return best;
  }

  /** Registers the credentials of a Basic header: the password, and `user:password` as sent. */
  addCredentials(username: string | undefined, password: string | undefined): this {
    this.add(password);
    if (username !== undefined && password !== undefined && password !== '') this.add(`${username}:${password}`);
    return this;
  }

  /** Text with every known secret and credential-looking value replaced by `[redacted]`. */
  redact(text: string): string {
    let out = text;
    if (this.literals.size > 0) {
      // Longest first, so a secret's base64 is not half-replaced by a shorter form.
      this.matcher ??= new RegExp([...this.literals].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'g');
      out = out.replace(this.matcher, REDACTED);
    }
    // Every pattern needs one of these words: most text (an item's name, a schema issue) has none.
    if (PATTERN_WORDS.test(out)) for (const [re, by] of PATTERNS) out = out.replace(re, by);
    return out;
  }

  /** A fresh redactor that knows this one's secrets and more. */
  with(extra: (r: Redactor) => void): Redactor {
    const r = new Redactor();
    for (const l of this.literals) r.literals.add(l);
    extra(r);
    return r;
  }
}

/** The process's secrets, registered by the configuration loader; used wherever upstream text is shown. */
export const processRedactor = new Redactor();

export function registerSecret(secret: string | undefined): void {
  processRedactor.add(secret);
}

export function redact(text: string): string {
  return processRedactor.redact(text);
}

/** Collapsed characters read past an excerpt's end, so that a redaction that shortens the text still leaves it full. */
const EXCERPT_GUARD = 2048;
/** A whitespace run longer than this counts as one space before redaction (no secret holds one). */
const LONG_SPACE = 64;
const LONG_SPACE_RUN = new RegExp(`\\s{${LONG_SPACE + 1},}`, 'g');
/** Where an excerpt may end when the text goes on: a secret in credential form (`user:pass@`, a token) holds none. */
const BOUNDARY = /[\s,"'{}[\]&;<>()]/;

/**
 * A short, single-line excerpt of upstream text (a body, a JSON key, a name) that is safe to show, whatever
 * the text's length. The redactor sees everything that can end up in the excerpt and more: the text is read
 * up to `max` plus a guard of collapsed characters (whitespace runs count as one: 16 KB of spaces in front of
 * a password do not push it out of sight). When the text goes on past that, the part read is cut back to a
 * boundary no secret can straddle: before any beginning of a registered secret form at its end, then back to
 * a delimiter (a secret in credential form, `user:pass@` or a token, holds none). Then it is redacted, its
 * whitespace collapsed, and cut to `max`.
 */
export function safeExcerpt(text: string, redactor: Redactor = processRedactor, max = 160): string {
  let window = text;
  let cut = false;
  if (text.length > max + EXCERPT_GUARD) {
    const limit = max + EXCERPT_GUARD;
    const runs = /\s+|\S+/g;
    let count = 0;
    let end = text.length;
    for (let m = runs.exec(text); m !== null; m = runs.exec(text)) {
      const isSpace = /\s/.test(m[0][0] as string);
      const add = isSpace ? 1 : m[0].length;
      if (count + add >= limit) {
        end = isSpace ? m.index : m.index + (limit - count);
        break;
      }
      count += add;
    }
    cut = end < text.length;
    window = text.slice(0, end);
  }
  if (window.length > LONG_SPACE) window = window.replace(LONG_SPACE_RUN, ' ');
  if (cut) window = cutAtBoundary(window, redactor);
  const t = redactor.redact(window).replace(/\s+/g, ' ').trim();
  if (t.length > max) return `${t.slice(0, max - 3)}...`;
  return cut ? `${t}...` : t;
}

/** `text` shortened until its end can split neither a registered secret nor a delimited token. */
function cutAtBoundary(text: string, redactor: Redactor): string {
  let t = text;
  for (;;) {
    const before = t.length;
    t = t.slice(0, t.length - redactor.splitTail(t));
    let i = t.length - 1;
    while (i >= 0 && !BOUNDARY.test(t[i] as string)) i--;
    t = t.slice(0, i + 1);
    if (t.length === before) return t;
  }
}

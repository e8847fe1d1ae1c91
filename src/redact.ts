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

  /** Registers a secret: it and its encoded forms are replaced wherever they appear. Short values are skipped
   * (a 1–3 character "secret" would blank ordinary text and is no protection anyway). */
  add(secret: string | undefined): this {
    if (secret === undefined || secret.length < 4) return this;
    const forms = [secret, encodeURIComponent(secret), Buffer.from(secret, 'utf8').toString('base64').replace(/=+$/, ''), JSON.stringify(secret).slice(1, -1), ...base64Variants(secret)];
    for (const f of forms) if (f.length >= 4) this.literals.add(f);
    this.matcher = undefined;
    return this;
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
    for (const [re, by] of PATTERNS) out = out.replace(re, by);
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

/**
 * A short, single-line excerpt of an upstream body that is safe to show: redacted first (on a bounded
 * prefix), then cut.
 */
export function safeExcerpt(text: string, redactor: Redactor = processRedactor, max = 160): string {
  const t = redactor.redact(text.slice(0, 16 * 1024)).replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 3)}...` : t;
}

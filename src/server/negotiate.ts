/**
 * Which exposition format a scraper asked for, as Prometheus' client_golang decides it
 * (expfmt.NegotiateIncludingOpenMetrics): the Accept header's media ranges by quality, highest first (ties in
 * header order); the first that is `text/plain` (version 0.0.4 or none) or `application/openmetrics-text`
 * (version 1.0.0, 0.0.1 or none) decides; anything else, or no header, gets the text format.
 */
export type ExpositionFormat = 'text' | 'openmetrics';

export function negotiateFormat(accept: string | undefined): ExpositionFormat {
  if (accept === undefined || accept === '') return 'text';
  const ranges = accept.split(',').map((part, index) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim());
    let q = 1;
    let version = '';
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
      if (k === 'q') q = Number.isFinite(Number(v)) ? Number(v) : 0;
      else if (k === 'version') version = v;
    }
    return { type: type.toLowerCase(), version, q, index };
  });
  ranges.sort((a, b) => b.q - a.q || a.index - b.index);
  for (const r of ranges) {
    if (r.q <= 0) continue;
    if (r.type === 'text/plain' && (r.version === '' || r.version === '0.0.4' || r.version === '1.0.0')) return 'text';
    if (r.type === 'application/openmetrics-text' && (r.version === '' || r.version === '1.0.0' || r.version === '0.0.1')) return 'openmetrics';
  }
  return 'text';
}

/**
 * Whether a scraper accepts a gzip body (RFC 9110 12.5.3): `gzip` (or `x-gzip`) listed with a quality above 0.
 * `gzip;q=0` refuses it; `*` alone is answered plain (identity is always acceptable, and the plain body is the
 * one every client reads). Several headers count as one list.
 */
export function acceptsGzip(header: string | readonly string[] | undefined): boolean {
  if (header === undefined) return false;
  const text = typeof header === 'string' ? header : header.join(',');
  let gzip: number | undefined;
  for (const part of text.split(',')) {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim());
    const c = coding.toLowerCase();
    if (c !== 'gzip' && c !== 'x-gzip') continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*(.*)$/i.exec(p);
      if (m) q = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(m[1] ?? '') ? Number(m[1]) : 0;
    }
    gzip = Math.max(gzip ?? 0, q);
  }
  return gzip !== undefined && gzip > 0;
}

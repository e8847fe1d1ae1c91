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

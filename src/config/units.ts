/** Durations like `30s`, `5m`, `1h30m`, `250ms` (Prometheus style) and sizes like `64MiB`. */
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const DURATION_WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (!DURATION_WHOLE.test(t)) return undefined;
  let total = 0;
  for (const m of t.matchAll(DURATION_PART)) total += Number(m[1]) * (UNIT_MS[m[2] as string] ?? 0);
  return Math.round(total);
}

/** The shortest Prometheus-style text for a number of ms: `1h30m`, `29.5s`, `250ms`, `0s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000 || !Number.isInteger(ms)) return `${ms}ms`;
  let rest = ms;
  let out = '';
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000]] as const) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  if (rest > 0) out += `${rest / 1000}s`;
  return out;
}

const SIZE_UNITS: Record<string, number> = {
  '': 1, B: 1, KB: 1e3, MB: 1e6, GB: 1e9, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3,
};

/** Bytes, or undefined when the text is not a size. */
export function parseSize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)?\s*$/.exec(text);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * (SIZE_UNITS[m[2] ?? ''] ?? 1));
}

/** The shortest binary-unit text for a number of bytes: `64MiB`, `1GiB`, `1536B`. */
export function formatBytes(n: number): string {
  if (n % 1024 ** 3 === 0) return `${n / 1024 ** 3}GiB`;
  if (n % 1024 ** 2 === 0) return `${n / 1024 ** 2}MiB`;
  if (n % 1024 === 0) return `${n / 1024}KiB`;
  return `${n}B`;
}

/**
 * Issue 26, item 4: every resource figure quoted outside bench/RESULTS.md (memory in MB, CPU seconds per
 * minute, requests per second, milliseconds of CPU or latency) is one RESULTS.md holds, and the figures that size deployments (Kubernetes
 * requests, the systemd unit's MemoryHigh/MemoryMax comment) are the realistic scenario's, read from its table.
 * A figure that is not a measurement is in EXCEPTIONS with the reason.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const RESULTS = readFileSync(join(ROOT, 'bench', 'RESULTS.md'), 'utf8');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

const FILES = [
  'README.md',
  'Dockerfile',
  'bin/cbwatch.js',
  'alerts/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((n) => n.endsWith('.md') && n !== 'metrics.md') // metrics.md is generated from the metric catalogue
    .map((n) => `docs/${n}`),
  ...walk(join(ROOT, 'deploy')).map((p) => relative(ROOT, p)),
];

/** Figures that are not measurements, by file and quoted text. */
const EXCEPTIONS: ReadonlyArray<{ file: string; text: string; reason: string }> = [
  { file: 'docs/configuration.md', text: '60 MB', reason: 'an example input (60 MB of `[],[],…`), not a measurement' },
  { file: 'docs/security.md', text: '60 MB', reason: 'the same example input' },
  { file: 'docs/security.md', text: '1 GB', reason: 'arithmetic on that example (20 million arrays), not a measurement' },
  { file: 'docs/security.md', text: '8.3 MB', reason: 'the size of an answer (the 1,000-bucket list), not a resource figure' },
  { file: 'docs/security.md', text: '100 MB', reason: 'arithmetic on the default value cap, not a measurement' },
  ...['9 MB', '3 MB', '48 MB', '8 MB', '1 MB', '4 MB', '64 MB'].map((text) => ({
    file: 'bin/cbwatch.js',
    text,
    reason: 'V8 settings and thresholds the launcher sets or avoids (semi-space sizes, release threshold), not measurements',
  })),
];

const FIGURE = /(\d[\d,]*(?:\.\d+)?) ?(MB|GB)\b|(\d+(?:\.\d+)?) s (?:of CPU )?per minute|(\d+(?:\.\d+)?) ?s\/min|(\d+(?:\.\d+)?) req\/s|(\d+(?:\.\d+)?) ms (?:of CPU|against|p99|median)/g;

/** The realistic scenario's table: peak RSS (MB) and CPU (s per minute). */
function realistic(): { peakMb: string; cpu: string } {
  const section = /<!-- section:realistic -->([\s\S]*?)<!-- end:realistic -->/.exec(RESULTS)?.[1] ?? '';
  const peakMb = /\| peak RSS \| ([\d.]+) MB/.exec(section)?.[1];
  const cpu = /\| CPU, s per minute \| ([\d.]+) \|/.exec(section)?.[1];
  if (peakMb === undefined || cpu === undefined) throw new Error('bench/RESULTS.md: realistic table without peak RSS or CPU rows');
  return { peakMb, cpu };
}

describe('figures quoted outside bench/RESULTS.md', () => {
  it.each(FILES)('%s: every MB, CPU s/min and req/s figure is in RESULTS.md (or a reviewed exception)', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const bad: string[] = [];
    for (const m of text.matchAll(FIGURE)) {
      const quoted = m[0];
      if (EXCEPTIONS.some((e) => e.file === file && quoted.startsWith(e.text))) continue;
      const [num, unit] =
        m[1] !== undefined ? [m[1], m[2] as string] : m[3] !== undefined ? [m[3], 's per minute'] : m[4] !== undefined ? [m[4], 's per minute'] : m[5] !== undefined ? [m[5], 'req/s'] : [m[6] as string, 'ms'];
      // In RESULTS.md the same number with the same unit (tables write CPU as "CPU, s per minute | 1.40").
      const n = num.replace(/,/g, '');
      const inResults =
        unit === 's per minute'
          ? new RegExp(`CPU, s per minute \\| ${n.replace('.', '\\.')} \\||${n.replace('.', '\\.')} s (of CPU )?per minute|\\| ${n.replace('.', '\\.')} \\|`).test(RESULTS)
          : new RegExp(`(^|[^\\d.])${n.replace('.', '\\.')} ?${unit}`).test(RESULTS.replace(/(\d),(\d{3})/g, '$1$2'));
      if (!inResults) bad.push(quoted);
    }
    expect(bad, `${file} quotes figures bench/RESULTS.md does not hold`).toEqual([]);
  });

  it('the deployment sizing comments quote the realistic scenario\'s peak RSS and CPU from its table', () => {
    const { peakMb, cpu } = realistic();
    const sized = ['deploy/systemd/cbwatch.service', 'deploy/kubernetes/base/deployment.yaml', 'deploy/kubernetes/overlays/sharded/statefulset.yaml', 'deploy/kubernetes/README.md', 'README.md'];
    for (const file of sized) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(text, file).toContain(`peak`);
      const peaks = [...text.matchAll(/peak(?: RSS| at| of)?[^.\n]*?(\d+(?:\.\d+)?) MB/g)].map((m) => m[1]);
      expect(peaks.length, file).toBeGreaterThan(0);
      for (const p of peaks) expect(p, file).toBe(peakMb);
      for (const m of text.replace(/\n\s*/g, ' ').matchAll(/(\d+(?:\.\d+)?) s (?:of CPU )?per minute/g)) expect(m[1], file).toBe(cpu);
    }
  });

  it('the exceptions are still quoted (a stale entry is removed)', () => {
    for (const e of EXCEPTIONS) expect(readFileSync(join(ROOT, e.file), 'utf8'), `${e.file}: ${e.text}`).toContain(e.text);
  });
});

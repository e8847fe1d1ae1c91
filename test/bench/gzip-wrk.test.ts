import { constants, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipParts, gzipWrkSection, parseWrk, wrkMs } from '../../bench/gzip-wrk.js';

// A report of Debian's wrk 4.1.0 with --latency (figures hand-written).
const REPORT = `Running 10s test @ http://127.0.0.1:1/metrics
  1 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.96ms    4.09ms  66.25ms   94.20%
    Req/Sec     8.47k     2.33k   11.62k    70.00%
  Latency Distribution
     50%  834.00us
     75%    1.60ms
     90%    3.58ms
     99%   17.03ms
  126720 requests in 15.04s, 19.41GB read
  Socket errors: connect 0, read 2, write 1, timeout 3
  Non-2xx or 3xx responses: 4
Requests/sec:   8424.30
Transfer/sec:      1.29GB
`;

describe('bench/gzip-wrk', () => {
  it('reads wrk figures in milliseconds', () => {
    expect(wrkMs('834.00us')).toBeCloseTo(0.834, 6);
    expect(wrkMs('17.03ms')).toBe(17.03);
    expect(wrkMs('1.50s')).toBe(1500);
    expect(parseWrk(REPORT)).toEqual({ rps: 8424.3, p50Ms: 0.834, p99Ms: 17.03, errors: 10 });
  });

  it('cuts a spliced gzip body at its parts, bytes unchanged', () => {
    const a = deflateRawSync(Buffer.from('alpha 1\n'), { finishFlush: constants.Z_SYNC_FLUSH });
    const b = deflateRawSync(Buffer.from('beta 2\n'), { finishFlush: constants.Z_SYNC_FLUSH });
    const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    const final = deflateRawSync(Buffer.alloc(0));
    const trailer = Buffer.alloc(8); // CRC and length are not read by the cut
    const body = Buffer.concat([header, a, b, final, trailer]);
    const parts = gzipParts(body);
    expect(parts).toHaveLength(4);
    expect(parts[0]).toEqual(header);
    expect(parts[1]).toEqual(a);
    expect(parts[2]).toEqual(b);
    expect(Buffer.concat(parts).equals(body)).toBe(true);
  });

  it('says why nothing was measured when wrk is missing', () => {
    const lines = gzipWrkSection({ skipped: 'wrk is not installed (ENOENT)' }, 'Measured now.');
    expect(lines[0]).toBe('## Gzip throughput against a static ceiling (issue 26, item 2)');
    expect(lines.join('\n')).toContain('Not measured: wrk is not installed (ENOENT).');
  });
});

/** crc32Combine against zlib's own CRC-32 of the concatenated bytes (the oracle is node:zlib, not the code). */
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32Combine } from '../../src/metrics/crc32.js';

describe('crc32Combine', () => {
  it('equals the CRC-32 of the concatenation, for pieces of many sizes', () => {
    for (const [la, lb] of [[0, 0], [0, 5], [5, 0], [1, 1], [3, 17], [1000, 1], [4096, 65_537], [70_000, 300_001]] as const) {
      const a = randomBytes(la);
      const b = randomBytes(lb);
      expect(crc32Combine(crc32(a), crc32(b), b.length)).toBe(crc32(Buffer.concat([a, b])));
    }
  });

  it('chains over many parts', () => {
    const parts = Array.from({ length: 12 }, (_, i) => randomBytes(i * 777 + 3));
    let crc = 0;
    for (const p of parts) crc = crc32Combine(crc, crc32(p), p.length);
    expect(crc).toBe(crc32(Buffer.concat(parts)));
  });

  it('handles a known value: "123456789" is 0xCBF43926 whole, and split anywhere', () => {
    const s = Buffer.from('123456789');
    for (let i = 0; i <= s.length; i++) {
      expect(crc32Combine(crc32(s.subarray(0, i)), crc32(s.subarray(i)), s.length - i)).toBe(0xcbf43926);
    }
  });
});

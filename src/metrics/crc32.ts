/**
 * CRC-32 of a concatenation from the CRCs of its pieces, without reading the bytes again.
 *
 * The gzip trailer holds the CRC-32 of the whole body. Each part of the exposition is prepared on its own
 * (collector parts in the collection worker, the small live parts on the main thread), so each knows only its
 * own CRC. Appending `len` bytes to a message multiplies its CRC register by x^(8·len) modulo the CRC
 * polynomial (GF(2) arithmetic, bit-reflected as zlib computes CRC-32); so
 * crc(A‖B) = crc(A)·x^(8·|B|) mod P  xor  crc(B). The power is built by squaring: x^(2^k) mod P for each set
 * bit of 8·|B|. A scrape combines a dozen parts in microseconds, however large they are.
 */

/** The CRC-32 polynomial, bit-reflected. */
const POLY = 0xedb88320;

/** a·b mod P, both in the reflected representation (bit 31 is x^0). */
function mulModP(a: number, b: number): number {
  let product = 0;
  let m = 0x80000000;
  while (m !== 0) {
    if ((a & m) !== 0) product ^= b;
    m >>>= 1;
    // b := b·x mod P
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return product >>> 0;
}

/** POW2[k] = x^(2^k) mod P. */
const POW2: number[] = [];
{
  let p = 0x40000000; // x^1
  for (let k = 0; k < 64; k++) {
    POW2.push(p);
    p = mulModP(p, p);
  }
}

/** x^(8·len) mod P. */
function shiftFor(len: number): number {
  let p = 0x80000000; // x^0
  let n = len;
  let k = 3; // 8·len = len·2^3
  while (n > 0) {
    if (n % 2 === 1) p = mulModP(POW2[k] as number, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** CRC-32 of A‖B from crc(A), crc(B) and |B|. */
export function crc32Combine(crcA: number, crcB: number, lenB: number): number {
  if (lenB === 0) return crcA >>> 0;
  return (mulModP(shiftFor(lenB), crcA >>> 0) ^ crcB) >>> 0;
}

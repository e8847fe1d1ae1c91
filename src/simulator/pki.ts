/**
 * Real X.509 certificates for the simulator, built with node:crypto alone: Node can parse certificates
 * (X509Certificate) but has no builder, so this file holds a minimal DER encoder for the few ASN.1 types a
 * TBSCertificate needs, and signs it with ECDSA P-256 / SHA-256. No openssl binary is required, so the
 * simulator behaves the same on a laptop and on a fresh CI image.
 *
 * Dates are whole seconds (X.509 Time has no fractions), so what a test computes from `notAfter` equals what
 * X509Certificate reads back from the PEM, to the second.
 */
import { X509Certificate, generateKeyPairSync, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

// ---- DER primitives ---------------------------------------------------------------------------------------

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, value: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(value.length), value]);
}

const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
/** [n] EXPLICIT, constructed. */
const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
const printable = (s: string): Buffer => tlv(0x13, Buffer.from(s, 'ascii'));

/** A non-negative INTEGER from big-endian bytes (a leading 0x00 keeps it positive). */
function uint(bytes: Buffer): Buffer {
  let b = bytes;
  while (b.length > 1 && b[0] === 0 && ((b[1] ?? 0) & 0x80) === 0) b = b.subarray(1);
  if (((b[0] ?? 0) & 0x80) !== 0) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(0x02, b);
}

function int(n: number): Buffer {
  const bytes: number[] = [];
  let v = n;
  do {
    bytes.unshift(v & 0xff);
    v = Math.floor(v / 256);
  } while (v > 0);
  return uint(Buffer.from(bytes));
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const [a = 0, b = 0, ...rest] = parts;
  const out: number[] = [40 * a + b];
  for (const p of rest) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

function bitString(b: Buffer, unusedBits = 0): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), b]));
}

/** UTCTime for 1950–2049 (RFC 5280 4.1.2.5), GeneralizedTime otherwise; always whole seconds, Zulu. */
function time(d: Date): Buffer {
  const iso = d.toISOString(); // 2031-11-20T16:37:47.000Z
  const y = d.getUTCFullYear();
  const digits = iso.slice(0, 19).replace(/[-T:]/g, ''); // 20311120163747
  if (y >= 1950 && y < 2050) return tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii'));
  return tlv(0x18, Buffer.from(`${digits}Z`, 'ascii'));
}

// ---- certificate ------------------------------------------------------------------------------------------

const OID = {
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  country: '2.5.4.6',
  organization: '2.5.4.10',
  organizationalUnit: '2.5.4.11',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

export interface DistinguishedName {
  /** Two letters. */
  C?: string;
  O?: string;
  OU?: string;
  CN: string;
}

function name(dn: DistinguishedName): Buffer {
  const rdns: Buffer[] = [];
  if (dn.C !== undefined) rdns.push(set(seq(oid(OID.country), printable(dn.C))));
  if (dn.O !== undefined) rdns.push(set(seq(oid(OID.organization), utf8(dn.O))));
  if (dn.OU !== undefined) rdns.push(set(seq(oid(OID.organizationalUnit), utf8(dn.OU))));
  rdns.push(set(seq(oid(OID.commonName), utf8(dn.CN))));
  return seq(...rdns);
}

/** The DN as Couchbase writes it in trustedCAs `subject`: `C=US, O=Example, CN=Root`. */
export function formatDn(dn: DistinguishedName): string {
  const parts: string[] = [];
  if (dn.C !== undefined) parts.push(`C=${dn.C}`);
  if (dn.O !== undefined) parts.push(`O=${dn.O}`);
  if (dn.OU !== undefined) parts.push(`OU=${dn.OU}`);
  parts.push(`CN=${dn.CN}`);
  return parts.join(', ');
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));
}

/** KeyUsage bits, numbered as in RFC 5280 (0 = digitalSignature … 5 = keyCertSign, 6 = cRLSign). */
function keyUsage(bits: number[]): Buffer {
  let v = 0;
  for (const b of bits) v |= 0x80 >> b;
  const bytes = Buffer.from([v & 0xff]);
  let unused = 0;
  while (unused < 7 && (v & (1 << unused)) === 0) unused++;
  return bitString(bytes, unused);
}

function ipBytes(ip: string): Buffer | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (!m) return undefined;
  return Buffer.from(m.slice(1, 5).map(Number));
}

export interface CertificateSpec {
  subject: DistinguishedName;
  notBefore: Date;
  notAfter: Date;
  /** A CA (basicConstraints cA=TRUE, keyCertSign) or an end-entity server certificate. */
  ca: boolean;
  /** Serial number bytes (positive); default: 16 bytes derived from the subject and dates. */
  serial?: Buffer;
  /** subjectAltName entries of an end-entity certificate: DNS names and IPv4 addresses. */
  altNames?: readonly string[];
}

export interface IssuedCertificate {
  readonly pem: string;
  readonly der: Buffer;
  readonly subject: DistinguishedName;
  /** `formatDn(subject)` */
  readonly subjectText: string;
  readonly issuerText: string;
  /** Truncated to whole seconds. */
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

const wholeSecond = (d: Date): Date => new Date(Math.floor(d.getTime() / 1000) * 1000);

function defaultSerial(spec: CertificateSpec): Buffer {
  // Deterministic, unique per subject and validity; the top bit cleared keeps it a positive INTEGER.
  const seed = Buffer.from(`${formatDn(spec.subject)}|${spec.notBefore.getTime()}|${spec.notAfter.getTime()}`, 'utf8');
  const out = Buffer.alloc(16);
  for (let i = 0; i < seed.length; i++) out[i % 16] = ((out[i % 16] ?? 0) * 31 + (seed[i] ?? 0)) & 0xff;
  out[0] = ((out[0] ?? 0) & 0x7f) | 0x01;
  return out;
}

/**
 * Build and sign one certificate. Without `issuer` it is self-signed (a root CA). Each call generates a
 * fresh P-256 key pair (about a millisecond).
 */
export function createCertificate(spec: CertificateSpec, issuer?: IssuedCertificate): IssuedCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const notBefore = wholeSecond(spec.notBefore);
  const notAfter = wholeSecond(spec.notAfter);
  const sigAlg = seq(oid(OID.ecdsaWithSHA256));
  const issuerDn = issuer ? issuer.subject : spec.subject;
  const spki = publicKey.export({ type: 'spki', format: 'der' });

  const exts: Buffer[] = [];
  if (spec.ca) {
    exts.push(extension(OID.basicConstraints, true, seq(bool(true))));
    exts.push(extension(OID.keyUsage, true, keyUsage([0, 5, 6])));
  } else {
    exts.push(extension(OID.basicConstraints, true, seq()));
    exts.push(extension(OID.keyUsage, true, keyUsage([0])));
    exts.push(extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth), oid(OID.clientAuth))));
    const alt = (spec.altNames ?? []).map((n) => {
      const ip = ipBytes(n);
      return ip ? tlv(0x87, ip) : tlv(0x82, Buffer.from(n, 'ascii'));
    });
    if (alt.length > 0) exts.push(extension(OID.subjectAltName, false, seq(...alt)));
  }

  const tbs = seq(
    explicit(0, int(2)), // v3
    uint(spec.serial ?? defaultSerial(spec)),
    sigAlg,
    name(issuerDn),
    seq(time(notBefore), time(notAfter)),
    name(spec.subject),
    spki,
    explicit(3, seq(...exts)),
  );
  const signature = sign('sha256', tbs, issuer ? issuer.privateKey : privateKey);
  const der = seq(tbs, sigAlg, bitString(signature));
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  const pem = `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
  return {
    pem,
    der,
    subject: spec.subject,
    subjectText: formatDn(spec.subject),
    issuerText: formatDn(issuerDn),
    notBefore,
    notAfter,
    privateKey,
    publicKey,
  };
}

/** Self-check used by the tests: the PEM parses and verifies against its issuer's key. */
export function verifies(cert: IssuedCertificate, issuer: IssuedCertificate = cert): boolean {
  const x = new X509Certificate(cert.pem);
  return x.verify(issuer.publicKey) && x.checkIssued(new X509Certificate(issuer.pem));
}

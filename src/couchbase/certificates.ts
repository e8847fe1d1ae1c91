/**
 * Certificate endpoints: trusted CAs (7.1+), the node certificate, the deprecated cluster root certificate
 * (pre-7.1) and the non-local CA upload switch. Loose schemas; the trusted-CAs array is validated element by
 * element in the collector so that one odd entry cannot blank the others.
 */
import { X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { checkedArray, uncheckedArray, uncheckedRecord } from './unchecked.js';

export const TRUSTED_CAS_ROUTE = '/pools/default/trustedCAs';
export const NODE_CERTIFICATE_ROUTE = '/pools/default/certificate/node/{node}';
/** Deprecated from 7.1; with `?extended=true` it answers the extended root certificate object. */
export const LEGACY_CERTIFICATE_ROUTE = '/pools/default/certificate';
export const ALLOW_NON_LOCAL_CA_UPLOAD_ROUTE = '/settings/security/allowNonLocalCACertUpload';

/** The whole trustedCAs answer: an array; each element is checked with `trustedCaSchema` on its own. */
export const trustedCasSchema = uncheckedArray();

/**
 * One trusted CA. The unauthenticated / low-privilege view has only id, subject, notBefore, notAfter and pem;
 * everything else is optional. Dates stay strings here: a malformed one is skipped by the mapper, not by zod.
 */
export const trustedCaSchema = z.looseObject({
  id: z.union([z.number(), z.string()]),
  subject: z.string().nullish(),
  notBefore: z.string().nullish(),
  notAfter: z.string().nullish(),
  pem: z.string().nullish(),
  type: z.string().nullish(),
  warnings: uncheckedArray().nullish(),
  nodes: checkedArray(z.string()).nullish(),
  loadTimestamp: z.string().nullish(),
});
export type TrustedCa = z.output<typeof trustedCaSchema>;

/**
 * Whether a `plain` passphrase is registered for the node's private key. The reference: the object is empty
 * unless the plain type was used; newer servers may name the type. Only this boolean leaves the schema —
 * the (masked) passphrase itself never travels inward.
 */
export function plainPassphraseRegistered(v: unknown): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.type === 'string') return o.type === 'plain';
  return Object.keys(o).length > 0;
}

export const nodeCertificateSchema = z.looseObject({
  subject: z.string().nullish(),
  expires: z.string().nullish(),
  /** `generated` or `uploaded` (7.1+). */
  type: z.string().nullish(),
  pem: z.string().nullish(),
  warnings: uncheckedArray().nullish(),
  privateKeyPassphrase: z.unknown().optional().transform(plainPassphraseRegistered),
});
export type NodeCertificate = z.output<typeof nodeCertificateSchema>;

/** `GET /pools/default/certificate?extended=true` (pre-7.1). */
export const legacyCertificateSchema = z.looseObject({
  cert: z
    .looseObject({
      type: z.string().optional(),
      pem: z.string().optional(),
      subject: z.string().optional(),
      expires: z.string().optional(),
    })
    .optional(),
  warnings: uncheckedArray().optional(),
});
export type LegacyCertificate = z.output<typeof legacyCertificateSchema>;

/** The setting comes back as a bare JSON boolean; tolerate an object or a string form too. */
export const allowNonLocalCaUploadSchema = z.union([
  z.boolean(),
  z.enum(['true', 'false']).transform((s) => s === 'true'),
  z.looseObject({ allowNonLocalCACertUpload: z.boolean().optional() }).transform((o) => o.allowNonLocalCACertUpload),
]);

const PEM_BLOCK_RE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The certificates of a PEM bundle (a chain file), in order. Text outside the blocks is ignored. */
export function splitPemBundle(text: string): string[] {
  return text.match(PEM_BLOCK_RE) ?? [];
}

/** A DN as X509Certificate prints it (`C=US\nO=X\nCN=Y`), in the comma form Couchbase uses. */
export function formatX509Name(name: string): string {
  return name
    .split('\n')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .join(', ');
}

export interface ParsedCertificate {
  readonly subject: string;
  readonly issuer: string;
  /** Epoch seconds. */
  readonly notBefore: number;
  readonly notAfter: number;
}

/** Parse one PEM certificate; undefined when it does not parse. */
export function parsePemCertificate(pem: string): ParsedCertificate | undefined {
  try {
    const x = new X509Certificate(pem);
    const notBefore = Date.parse(x.validFrom) / 1000;
    const notAfter = Date.parse(x.validTo) / 1000;
    if (!Number.isFinite(notBefore) || !Number.isFinite(notAfter)) return undefined;
    return { subject: formatX509Name(x.subject), issuer: formatX509Name(x.issuer), notBefore, notAfter };
  } catch {
    return undefined;
  }
}

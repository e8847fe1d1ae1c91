/**
 * Collector `certificates`: when every trusted CA, node certificate and certificate of a node's chain expires.
 *
 * Calls: GET /pools/default/trustedCAs (7.1+; a 404 means an older cluster and falls back to the deprecated
 * GET /pools/default/certificate?extended=true), GET /pools/default/certificate/node/{node} for every node of
 * /pools/default/nodeServices, and GET /settings/security/allowNonLocalCACertUpload.
 *
 * Works with the limited trustedCAs view a low-privilege user gets (id, subject, notBefore, notAfter, pem):
 * the families that need the other fields (warnings, nodes, origin) are then simply absent; a forbidden node
 * certificate call is reported once and skipped. A node whose certificate call fails (4xx/5xx, time-out, bad
 * body) is an item failure (`cbwatch_collector_item_errors_total`): only that node's series go, and the poll
 * fails only when every node fails. The non-local upload switch is an item of its own in the same way.
 *
 * The node's `pem` is the chain as loaded (node certificate first, then intermediates); every certificate in
 * it is parsed with node:crypto, because an intermediate expiring before the leaf is the classic outage.
 * Subjects are bounded label values: a cluster has a handful of CAs and one chain per node.
 */
import { safeExcerpt } from '../redact.js';
import {
  ALLOW_NON_LOCAL_CA_UPLOAD_ROUTE,
  LEGACY_CERTIFICATE_ROUTE,
  NODE_CERTIFICATE_ROUTE,
  TRUSTED_CAS_ROUTE,
  allowNonLocalCaUploadSchema,
  legacyCertificateSchema,
  nodeCertificateSchema,
  parsePemCertificate,
  splitPemBundle,
  trustedCaSchema,
  trustedCasSchema,
} from '../couchbase/certificates.js';
import type { LegacyCertificate, NodeCertificate } from '../couchbase/certificates.js';
import { fetchNodeServices, nodeNames } from '../couchbase/nodeServices.js';
import { MAX_INVALID_SHOWN, notAnObject } from '../couchbase/source.js';
import { CbwError, summariseIssues } from '../errors.js';
import { isCode, isoToSeconds, ItemTally, reportForbidden } from './helpers.js';
import type { ItemSink } from './helpers.js';
import { defineFamily } from '../metrics/family.js';
import type { SampleSet } from '../metrics/family.js';
import type { CollectContext, Collector, Skip } from './types.js';

const C = 'certificates';
const CA = ['id', 'subject'] as const;

export const certificateFamilies = {
  caCount: defineFamily(C, 'couchbase_trusted_cas', 'gauge', 'Number of trusted CA certificates of the cluster (trustedCAs; 1 for the single root certificate of pre-7.1 clusters).', [], 'count'),
  caNotAfter: defineFamily(C, 'couchbase_trusted_ca_not_after_timestamp_seconds', 'gauge', 'End of validity of a trusted CA certificate (notAfter). id is "legacy" for the root certificate of a pre-7.1 cluster.', CA, 'timestamp_seconds'),
  caNotBefore: defineFamily(C, 'couchbase_trusted_ca_not_before_timestamp_seconds', 'gauge', 'Start of validity of a trusted CA certificate (notBefore).', CA, 'timestamp_seconds'),
  caInfo: defineFamily(C, 'couchbase_trusted_ca_info', 'gauge', 'Trusted CA certificate (always 1); origin is generated (by Couchbase) or uploaded. Needs a security role (full trustedCAs view).', [...CA, 'origin'], 'info'),
  caWarnings: defineFamily(C, 'couchbase_trusted_ca_warnings', 'gauge', 'Number of warnings Couchbase reports for a trusted CA (e.g. self_signed, not signed by cluster CA, expiring). Needs a security role.', CA, 'count'),
  caNodes: defineFamily(C, 'couchbase_trusted_ca_nodes', 'gauge', 'Number of nodes whose certificate is signed by this trusted CA (nodes). Needs a security role.', CA, 'count'),
  caNodeInfo: defineFamily(C, 'couchbase_trusted_ca_node_info', 'gauge', 'A node using this trusted CA (always 1). Needs a security role.', [...CA, 'node'], 'info'),
  nodeNotAfter: defineFamily(C, 'couchbase_node_certificate_not_after_timestamp_seconds', 'gauge', 'Expiry of the node certificate: notAfter of the first certificate of its PEM, else Couchbase\'s expires field; origin is generated, uploaded, or unknown on servers that do not say.', ['node', 'subject', 'origin'], 'timestamp_seconds'),
  nodeWarnings: defineFamily(C, 'couchbase_node_certificate_warnings', 'gauge', 'Number of warnings Couchbase reports for the node certificate.', ['node'], 'count'),
  nodePlain: defineFamily(C, 'couchbase_node_certificate_plain_passphrase', 'gauge', '1 when a plain private-key passphrase is registered for the node certificate (meant for pre-production only), else 0. The passphrase itself is never read.', ['node'], 'bool'),
  chainNotAfter: defineFamily(C, 'couchbase_node_certificate_chain_not_after_timestamp_seconds', 'gauge', 'End of validity of each certificate in the node\'s PEM chain, parsed from the PEM; position 0 is the node certificate, then its issuers.', ['node', 'position', 'subject'], 'timestamp_seconds'),
  chainInfo: defineFamily(C, 'couchbase_node_certificate_chain_info', 'gauge', 'Subject and issuer of each certificate in the node\'s PEM chain (always 1).', ['node', 'position', 'subject', 'issuer'], 'info'),
  nodeEarliest: defineFamily(C, 'couchbase_node_certificate_earliest_not_after_timestamp_seconds', 'gauge', 'The earliest expiry among the node certificate and every certificate of its chain: when TLS to this node breaks.', ['node'], 'timestamp_seconds'),
  nonLocalUpload: defineFamily(C, 'couchbase_security_allow_non_local_ca_upload', 'gauge', '1 when CA certificates may be uploaded from hosts other than localhost (allowNonLocalCACertUpload), else 0.', [], 'bool'),
} as const;

/**
 * Pure mapping of the trustedCAs array (full or limited view). Each CA is an item: one that does not parse is
 * reported to `items` as failed (skipped when no sink is given) and the others keep their series.
 */
export function mapTrustedCAs(raw: readonly unknown[], out: SampleSet, skip: Skip, items?: ItemSink): void {
  const f = certificateFamilies;
  out.add(f.caCount, {}, raw.length);
  if (raw.length === 0) skip('trusted_cas_empty', 'trustedCAs answered an empty array');
  // The first few bad entries are described one by one, the rest counted as one report (an answer of a
  // million bad entries must not cost a million error messages).
  let described = 0;
  let counted = 0;
  for (const [i, el] of raw.entries()) {
    const wrong = notAnObject(el);
    const parsed = wrong === undefined ? trustedCaSchema.safeParse(el) : undefined;
    if (parsed === undefined || !parsed.success) {
      if (items && described >= MAX_INVALID_SHOWN) {
        counted++;
        continue;
      }
      described++;
      const message = `element ${i}: ${parsed === undefined ? wrong : summariseIssues(parsed.error.issues)}`;
      if (items) items.failed(`trusted CA ${i}`, new CbwError('CBW_ERR_SCHEMA', `GET ${TRUSTED_CAS_ROUTE}: ${message}`));
      else skip('trusted_ca_invalid', message);
      continue;
    }
    const ca = parsed.data;
    items?.ok(`trusted CA ${i}`);
    const pemSubject = (ca.subject ?? undefined) === undefined && typeof ca.pem === 'string' ? parsePemCertificate(ca.pem)?.subject : undefined;
    const l = { id: String(ca.id), subject: ca.subject ?? pemSubject ?? '' };
    addDate(out, f.caNotAfter, l, ca.notAfter, skip, `trusted CA ${l.id} notAfter`);
    addDate(out, f.caNotBefore, l, ca.notBefore, skip, `trusted CA ${l.id} notBefore`);
    if (typeof ca.type === 'string') out.add(f.caInfo, { ...l, origin: ca.type }, 1);
    if (Array.isArray(ca.warnings)) out.add(f.caWarnings, l, ca.warnings.length);
    if (Array.isArray(ca.nodes)) {
      out.add(f.caNodes, l, ca.nodes.length);
      for (const node of ca.nodes) out.add(f.caNodeInfo, { ...l, node }, 1);
    }
  }
  if (counted > 0) items?.failed(`${counted} more trusted CAs`, new CbwError('CBW_ERR_SCHEMA', `GET ${TRUSTED_CAS_ROUTE}: ${counted} more elements do not parse`), counted);
}

/** Pre-7.1: the single cluster root certificate, reported as the trusted CA with id "legacy". */
export function mapLegacyCertificate(payload: LegacyCertificate, out: SampleSet, skip: Skip): void {
  const f = certificateFamilies;
  const cert = payload.cert;
  if (cert === undefined) {
    skip('legacy_certificate_invalid', 'no cert object');
    return;
  }
  const parsed = cert.pem !== undefined ? parsePemCertificate(cert.pem) : undefined;
  const l = { id: 'legacy', subject: cert.subject ?? parsed?.subject ?? '' };
  out.add(f.caCount, {}, 1);
  // The PEM is the certificate TLS uses: pre-7.1 servers write `expires` in local time with a `Z` (the docs'
  // example says 15:59:59Z for a certificate whose notAfter is 23:59:59 GMT), so the PEM's date wins.
  const expires = parseDate(cert.expires, skip, 'legacy root certificate expires');
  out.add(f.caNotAfter, l, parsed?.notAfter ?? expires);
  // The extended object has no notBefore: take it from the PEM when it parses.
  if (parsed !== undefined) out.add(f.caNotBefore, l, parsed.notBefore);
  if (cert.type !== undefined) out.add(f.caInfo, { ...l, origin: cert.type }, 1);
  if (payload.warnings !== undefined) out.add(f.caWarnings, l, payload.warnings.length);
}

/**
 * One node's certificate: its expiry (the PEM's first certificate, else the `expires` field: see
 * mapLegacyCertificate for why the PEM wins), warnings, passphrase type, and every certificate of its chain.
 */
export function mapNodeCertificate(node: string, cert: NodeCertificate, out: SampleSet, skip: Skip): void {
  const f = certificateFamilies;
  const chain: Array<{ position: number; subject: string; issuer: string; notAfter: number }> = [];
  if (typeof cert.pem === 'string') {
    const blocks = splitPemBundle(cert.pem);
    if (blocks.length === 0) skip('pem_no_certificate', `node ${node}: pem holds no certificate`);
    for (const [position, block] of blocks.entries()) {
      const p = parsePemCertificate(block);
      if (p === undefined) {
        skip('pem_unparseable', `node ${node}: certificate ${position} of the chain does not parse`);
        continue;
      }
      chain.push({ position, subject: p.subject, issuer: p.issuer, notAfter: p.notAfter });
    }
  }
  const subject = cert.subject ?? chain.find((c) => c.position === 0)?.subject ?? '';
  const expires = chain.find((c) => c.position === 0)?.notAfter ?? parseDate(cert.expires, skip, `node ${node} expires`);
  out.add(f.nodeNotAfter, { node, subject, origin: cert.type ?? 'unknown' }, expires);
  if (Array.isArray(cert.warnings)) out.add(f.nodeWarnings, { node }, cert.warnings.length);
  out.add(f.nodePlain, { node }, cert.privateKeyPassphrase);
  for (const c of chain) {
    const position = String(c.position);
    out.add(f.chainNotAfter, { node, position, subject: c.subject }, c.notAfter);
    out.add(f.chainInfo, { node, position, subject: c.subject, issuer: c.issuer }, 1);
  }
  const all = [...chain.map((c) => c.notAfter), ...(expires !== undefined ? [expires] : [])];
  if (all.length > 0) out.add(f.nodeEarliest, { node }, Math.min(...all));
}

function addDate(
  out: SampleSet,
  def: (typeof certificateFamilies)[keyof typeof certificateFamilies],
  labels: Readonly<Record<string, string>>,
  iso: string | null | undefined,
  skip: Skip,
  what: string,
): number | undefined {
  const s = parseDate(iso, skip, what);
  out.add(def, labels, s);
  return s;
}

/** Epoch seconds of an ISO 8601 field; a value that is not one is skipped (counted), an absent one is not. */
function parseDate(iso: string | null | undefined, skip: Skip, what: string): number | undefined {
  if (iso === undefined || iso === null) return undefined;
  const s = isoToSeconds(iso);
  if (s === undefined) skip('invalid_date', `${what}: not an ISO 8601 timestamp`);
  return s;
}

async function collectTrustedCAs(ctx: CollectContext<'certificates'>, items: ItemSink): Promise<void> {
  const res = await ctx.client.requestJson(TRUSTED_CAS_ROUTE, {}, trustedCasSchema, { allowStatus: [404] });
  if (res.data !== undefined) {
    mapTrustedCAs(res.data, ctx.out, ctx.skipped, items);
    return;
  }
  // 404: a cluster older than 7.1 has no trustedCAs; read its single root certificate instead.
  const legacy = await ctx.client.requestJson(LEGACY_CERTIFICATE_ROUTE, {}, legacyCertificateSchema, {
    query: { extended: true },
    allowStatus: [400],
  });
  if (legacy.data === undefined) {
    // 400 "deprecated, please use /pools/default/trustedCAs" (more than one root CA) or "this API is
    // disabled": nothing to read here, and nothing an operator must act on.
    ctx.log.debug({ endpoint: LEGACY_CERTIFICATE_ROUTE, status: legacy.status, message: safeExcerpt(legacy.text, undefined, 120) }, 'deprecated root certificate call refused; no CA expiry available');
    return;
  }
  mapLegacyCertificate(legacy.data, ctx.out, ctx.skipped);
}

/** One node's certificate; a failure throws (an item failure), a 403 is reported and skipped. */
async function collectNode(ctx: CollectContext<'certificates'>, node: string): Promise<void> {
  let cert: NodeCertificate;
  try {
    cert = await ctx.client.getJson(NODE_CERTIFICATE_ROUTE, { node }, nodeCertificateSchema);
  } catch (err) {
    if (isCode(err, 'CBW_ERR_FORBIDDEN')) return reportForbidden(ctx, NODE_CERTIFICATE_ROUTE, err);
    throw err;
  }
  mapNodeCertificate(node, cert, ctx.out, ctx.skipped);
}

async function collectNonLocalUpload(ctx: CollectContext<'certificates'>): Promise<void> {
  try {
    const res = await ctx.client.requestJson(ALLOW_NON_LOCAL_CA_UPLOAD_ROUTE, {}, allowNonLocalCaUploadSchema, { allowStatus: [404] });
    // 404 before 7.1, where the restriction does not exist.
    if (res.data !== undefined) ctx.out.add(certificateFamilies.nonLocalUpload, {}, res.data);
  } catch (err) {
    if (isCode(err, 'CBW_ERR_FORBIDDEN')) return reportForbidden(ctx, ALLOW_NON_LOCAL_CA_UPLOAD_ROUTE, err);
    throw err;
  }
}

type CertificateItem = { readonly node: string } | { readonly nonLocalUpload: true };

export const certificatesCollector: Collector<'certificates'> = {
  name: 'certificates',
  defaultInterval: 300_000,
  families: Object.values(certificateFamilies),
  role: 'Security Admin (Local or External User Security Admin) for node certificates and the full trustedCAs view; any user gets CA expiry',
  description: 'Expiry of every trusted CA, node certificate and chain certificate; certificate warnings',
  async collect(ctx) {
    // The trusted CAs and the node list are the poll's own requests: their failure fails the poll. Each CA,
    // node certificate and the upload switch is an item (see ItemTally).
    const tally = new ItemTally(ctx);
    await collectTrustedCAs(ctx, tally);
    const ns = await fetchNodeServices(ctx);
    const items: CertificateItem[] = [...nodeNames(ns, ctx.cluster.url).map((node) => ({ node })), { nonLocalUpload: true }];
    await Promise.all(items.map((i) => ('node' in i ? tally.run(`node ${i.node}`, () => collectNode(ctx, i.node)) : tally.run(ALLOW_NON_LOCAL_CA_UPLOAD_ROUTE, () => collectNonLocalUpload(ctx)))));
    tally.settle();
  },
};

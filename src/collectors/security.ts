/**
 * Collector `security`: the cluster's on-the-wire security posture and LDAP settings, never their secrets.
 *
 * Calls: GET /settings/security (global; on 7.x it also holds a sub-object per service), GET
 * /settings/security/{service} for each of the eight services (a 404 — a service or version the cluster
 * lacks — skips that service), GET /settings/ldap (403 for a user without a security role and 404 on
 * Community Edition: skipped, the rest still succeeds) and GET /internalSettings.
 *
 * The global settings are the poll's own request: their failure fails the poll. Each of the other calls is an
 * item: one that fails (4xx/5xx other than those, time-out, bad body) costs only its own series (a failed
 * service does not fall back to its sub-object of the global answer) and is counted in
 * `cbwatch_collector_item_errors_total`.
 *
 * Per-service values are the EFFECTIVE ones: a service that sets no tlsMinVersion or honorCipherOrder of its
 * own uses the global value, and that is what a client connecting to it gets, so that is what we export.
 * Cipher-suite counts are per scope as configured (an empty list means "the defaults").
 *
 * LDAP: the schema strips every field but the posture ones (see src/couchbase/security.ts), so bindPass,
 * clientTLSKey/Cert, cacert, bindDN and the query templates cannot reach a metric or a log line.
 */
import {
  ENCRYPTION_LEVELS,
  INTERNAL_SETTINGS_ROUTE,
  LDAP_ROUTE,
  SECURITY_ROUTE,
  SECURITY_SERVICES,
  SECURITY_SERVICE_ROUTE,
  TLS_VERSIONS,
  internalSettingsSchema,
  ldapSchema,
  securityGlobalSchema,
  securityServiceSchema,
} from '../couchbase/security.js';
import type { LdapSettings, SecurityGlobalSettings, SecurityService, SecurityServiceSettings } from '../couchbase/security.js';
import { defineFamily } from '../metrics/family.js';
import type { SampleSet } from '../metrics/family.js';
import { collectItems, isCode, oneHot, reportForbidden } from './helpers.js';
import type { CollectContext, Collector, Skip } from './types.js';

const C = 'security';
const S = ['service'] as const;

export const securityFamilies = {
  tlsMin: defineFamily(C, 'couchbase_security_tls_min_version', 'gauge', 'Minimum TLS version accepted (one-hot over tlsv1, tlsv1.1, tlsv1.2, tlsv1.3); service="global" for the cluster-wide value, else the service\'s effective value (its own, or the global one it inherits).', ['service', 'version'], 'bool'),
  honorCipherOrder: defineFamily(C, 'couchbase_security_honor_cipher_order', 'gauge', '1 when the server\'s cipher-suite order is preferred over the client\'s (honorCipherOrder; effective value per service), else 0.', S, 'bool'),
  ciphersConfigured: defineFamily(C, 'couchbase_security_cipher_suites_configured', 'gauge', 'Number of cipher suites configured at this scope (cipherSuites); 0 means the defaults.', S, 'count'),
  ciphersSupported: defineFamily(C, 'couchbase_security_cipher_suites_supported', 'gauge', 'Number of cipher suites the service supports (supportedCipherSuites, read-only).', S, 'count'),
  uiHttpDisabled: defineFamily(C, 'couchbase_security_ui_over_http_disabled', 'gauge', '1 when the web console is disabled over plain http (disableUIOverHttp), else 0.', [], 'bool'),
  uiHttpsDisabled: defineFamily(C, 'couchbase_security_ui_over_https_disabled', 'gauge', '1 when the web console is disabled over https (disableUIOverHttps), else 0.', [], 'bool'),
  wwwAuthDisabled: defineFamily(C, 'couchbase_security_www_authenticate_disabled', 'gauge', '1 when unauthenticated requests get no WWW-Authenticate challenge (disableWWWAuthenticate), else 0.', [], 'bool'),
  encryptionLevel: defineFamily(C, 'couchbase_security_cluster_encryption_level', 'gauge', 'Node-to-node encryption level (one-hot over control, all, strict); absent when node-to-node encryption is off.', ['level'], 'bool'),
  ldapAuthn: defineFamily(C, 'couchbase_ldap_authentication_enabled', 'gauge', '1 when LDAP authenticates users (authenticationEnabled), else 0.', [], 'bool'),
  ldapAuthz: defineFamily(C, 'couchbase_ldap_authorization_enabled', 'gauge', '1 when LDAP groups are used for authorization (authorizationEnabled), else 0.', [], 'bool'),
  ldapEncryption: defineFamily(C, 'couchbase_ldap_encryption', 'gauge', 'Encryption to the LDAP servers, one-hot over starttls (StartTLSExtension), tls (TLS) and none (false/None).', ['encryption'], 'bool'),
  ldapCertValidation: defineFamily(C, 'couchbase_ldap_server_cert_validation', 'gauge', '1 when the LDAP server certificate is validated (serverCertValidation), else 0.', [], 'bool'),
  ldapHosts: defineFamily(C, 'couchbase_ldap_hosts', 'gauge', 'Number of configured LDAP hosts.', [], 'count'),
  ldapPort: defineFamily(C, 'couchbase_ldap_port', 'gauge', 'Configured LDAP port.', [], ''),
  ldapParallel: defineFamily(C, 'couchbase_ldap_max_parallel_connections', 'gauge', 'Maximum parallel connections to the LDAP servers.', [], 'count'),
  ldapCacheSize: defineFamily(C, 'couchbase_ldap_max_cache_size', 'gauge', 'Maximum number of cached LDAP requests (maxCacheSize).', [], 'count'),
  ldapCacheLifetime: defineFamily(C, 'couchbase_ldap_cache_value_lifetime_seconds', 'gauge', 'Lifetime of cached LDAP values (cacheValueLifetime).', [], 'seconds'),
  ldapTimeout: defineFamily(C, 'couchbase_ldap_request_timeout_seconds', 'gauge', 'LDAP request time-out (requestTimeout).', [], 'seconds'),
  ldapNested: defineFamily(C, 'couchbase_ldap_nested_groups_enabled', 'gauge', '1 when nested LDAP groups are searched recursively (nestedGroupsEnabled), else 0.', [], 'bool'),
  ldapNestedDepth: defineFamily(C, 'couchbase_ldap_nested_groups_max_depth', 'gauge', 'Maximum depth of the recursive group search (nestedGroupsMaxDepth).', [], 'count'),
  indexAware: defineFamily(C, 'couchbase_index_aware_rebalance_disabled', 'gauge', '1 when index-aware rebalance for view queries is disabled (indexAwareRebalanceDisabled; not recommended for production), else 0.', [], 'bool'),
} as const;

function mapTlsScope(scope: string, own: SecurityServiceSettings, inherited: SecurityServiceSettings, out: SampleSet, skip: Skip): void {
  const f = securityFamilies;
  const tls = own.tlsMinVersion ?? inherited.tlsMinVersion;
  if (typeof tls === 'string') {
    if ((TLS_VERSIONS as readonly string[]).includes(tls)) oneHot(out, f.tlsMin, { service: scope }, 'version', TLS_VERSIONS, tls);
    else skip('unknown_tls_version', `${scope}: tlsMinVersion ${tls.slice(0, 20)}`);
  }
  out.add(f.honorCipherOrder, { service: scope }, own.honorCipherOrder ?? inherited.honorCipherOrder);
  out.add(f.ciphersConfigured, { service: scope }, own.cipherSuites?.length);
  out.add(f.ciphersSupported, { service: scope }, own.supportedCipherSuites?.length);
}

const SERVICE_KEYS = new Set(['tlsMinVersion', 'honorCipherOrder', 'cipherSuites', 'supportedCipherSuites']);

/**
 * Pure mapping of the global settings plus whatever per-service answers arrived (service → settings; a
 * service missing from `services` falls back to its sub-object in the global answer, if any, unless its own
 * call failed: `failed` services get no series).
 */
export function mapSecurity(
  global: SecurityGlobalSettings,
  services: ReadonlyMap<string, SecurityServiceSettings>,
  out: SampleSet,
  skip: Skip,
  failed: ReadonlySet<string> = new Set(),
): void {
  const f = securityFamilies;
  out.add(f.uiHttpDisabled, {}, global.disableUIOverHttp);
  out.add(f.uiHttpsDisabled, {}, global.disableUIOverHttps);
  out.add(f.wwwAuthDisabled, {}, global.disableWWWAuthenticate);
  const level = global.clusterEncryptionLevel;
  if (typeof level === 'string') {
    if ((ENCRYPTION_LEVELS as readonly string[]).includes(level)) for (const l of ENCRYPTION_LEVELS) out.add(f.encryptionLevel, { level: l }, l === level);
    else skip('unknown_encryption_level', `clusterEncryptionLevel ${level.slice(0, 20)}`);
  }
  mapTlsScope('global', global, {}, out, skip);

  const known = new Set<string>(SECURITY_SERVICES);
  const record = global as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    // A sub-object with TLS settings under a name we do not know: a new service. Count it, do not guess.
    if (!known.has(key) && isServiceLike(value)) skip('unknown_service', key.slice(0, 40));
  }
  for (const service of SECURITY_SERVICES) {
    if (failed.has(service)) continue;
    let own = services.get(service);
    if (own === undefined && record[service] !== undefined && record[service] !== null) {
      const sub = securityServiceSchema.safeParse(record[service]);
      if (sub.success) own = sub.data;
      else skip('service_settings_invalid', service);
    }
    if (own === undefined) {
      skip('service_not_available', service);
      continue;
    }
    mapTlsScope(service, own, global, out, skip);
  }
}

function isServiceLike(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).some((k) => SERVICE_KEYS.has(k));
}

/** `StartTLSExtension` → starttls, `TLS` → tls, false / "false" / "None" → none. */
export function ldapEncryption(v: string | boolean | null | undefined): 'starttls' | 'tls' | 'none' | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === false) return 'none';
  if (v === true) return undefined;
  const s = v.toLowerCase();
  if (s === 'starttlsextension' || s === 'starttls') return 'starttls';
  if (s === 'tls') return 'tls';
  if (s === 'false' || s === 'none' || s === '') return 'none';
  return undefined;
}

const msToSeconds = (ms: number | null | undefined): number | undefined => (typeof ms === 'number' ? ms / 1000 : undefined);

export function mapLdap(ldap: LdapSettings, out: SampleSet, skip: Skip): void {
  const f = securityFamilies;
  out.add(f.ldapAuthn, {}, ldap.authenticationEnabled);
  out.add(f.ldapAuthz, {}, ldap.authorizationEnabled);
  const enc = ldapEncryption(ldap.encryption);
  if (enc !== undefined) for (const e of ['starttls', 'tls', 'none'] as const) out.add(f.ldapEncryption, { encryption: e }, e === enc);
  else if (ldap.encryption !== undefined && ldap.encryption !== null) skip('unknown_ldap_encryption', 'encryption has an unknown value');
  out.add(f.ldapCertValidation, {}, ldap.serverCertValidation);
  out.add(f.ldapHosts, {}, ldap.hosts?.length);
  out.add(f.ldapPort, {}, ldap.port);
  out.add(f.ldapParallel, {}, ldap.maxParallelConnections);
  out.add(f.ldapCacheSize, {}, ldap.maxCacheSize);
  out.add(f.ldapCacheLifetime, {}, msToSeconds(ldap.cacheValueLifetime));
  out.add(f.ldapTimeout, {}, msToSeconds(ldap.requestTimeout));
  out.add(f.ldapNested, {}, ldap.nestedGroupsEnabled);
  out.add(f.ldapNestedDepth, {}, ldap.nestedGroupsMaxDepth);
}

/** An optional call: an allowed status (404) → undefined, 403 → reported once and skipped. Anything else throws. */
async function optional<T>(ctx: CollectContext<'security'>, endpoint: string, load: () => Promise<{ status: number; data: T | undefined }>, notFound?: { reason: string; detail: string }): Promise<T | undefined> {
  try {
    const res = await load();
    if (res.data === undefined && notFound) ctx.skipped(notFound.reason, notFound.detail);
    return res.data;
  } catch (err) {
    if (isCode(err, 'CBW_ERR_FORBIDDEN')) {
      reportForbidden(ctx, endpoint, err);
      return undefined;
    }
    throw err;
  }
}

export const securityCollector: Collector<'security'> = {
  name: 'security',
  defaultInterval: 300_000,
  families: Object.values(securityFamilies),
  role: 'Security Admin (Local User Security Admin) for LDAP; Full Admin for /internalSettings; any role with cluster.settings read for TLS settings',
  description: 'TLS minimum versions, cipher order, UI over http, node-to-node encryption level, LDAP posture (never secrets)',
  async collect(ctx) {
    const c = ctx.client;
    const services = new Map<string, SecurityServiceSettings>();
    const failed = new Set<string>();
    let ldap: LdapSettings | undefined;
    let internal: { indexAwareRebalanceDisabled?: boolean | null | undefined } | undefined;
    type Item = { readonly service: SecurityService } | { readonly ldap: true } | { readonly internal: true };
    const items: Item[] = [...SECURITY_SERVICES.map((service) => ({ service })), { ldap: true }, { internal: true }];
    const [global] = await Promise.all([
      c.getJson(SECURITY_ROUTE, {}, securityGlobalSchema),
      // Items run beside the global call; if that fails, the poll fails whatever they did.
      collectItems(
        ctx,
        items,
        (i) => ('service' in i ? `service ${i.service}` : 'ldap' in i ? LDAP_ROUTE : INTERNAL_SETTINGS_ROUTE),
        async (i) => {
          if ('service' in i) {
            try {
              const s = await optional(ctx, SECURITY_SERVICE_ROUTE, () => c.requestJson(SECURITY_SERVICE_ROUTE, { service: i.service }, securityServiceSchema, { allowStatus: [404] }));
              if (s !== undefined) services.set(i.service, s);
            } catch (err) {
              failed.add(i.service);
              throw err;
            }
          } else if ('ldap' in i) {
            ldap = await optional(ctx, LDAP_ROUTE, () => c.requestJson(LDAP_ROUTE, {}, ldapSchema, { allowStatus: [404] }), { reason: 'ldap_not_available', detail: 'GET /settings/ldap answered 404' });
          } else {
            internal = await optional(ctx, INTERNAL_SETTINGS_ROUTE, () => c.requestJson(INTERNAL_SETTINGS_ROUTE, {}, internalSettingsSchema, { allowStatus: [404] }), { reason: 'internal_settings_not_available', detail: 'GET /internalSettings answered 404' });
          }
        },
      ),
    ]);
    mapSecurity(global, services, ctx.out, ctx.skipped, failed);
    if (ldap !== undefined) mapLdap(ldap, ctx.out, ctx.skipped);
    if (internal !== undefined) ctx.out.add(securityFamilies.indexAware, {}, internal.indexAwareRebalanceDisabled);
  },
};

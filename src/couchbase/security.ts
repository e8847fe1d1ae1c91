/**
 * Security settings endpoints: global and per-service TLS settings, LDAP, and /internalSettings.
 * The LDAP schema deliberately STRIPS unknown keys (z.object, not looseObject): bindPass, clientTLSKey,
 * clientTLSCert, cacert, bindDN and the query templates are never part of the parsed value, so no code past
 * this edge can log or export them by mistake.
 */
import { z } from 'zod';
import { checkedArray } from './unchecked.js';

export const SECURITY_ROUTE = '/settings/security';
export const SECURITY_SERVICE_ROUTE = '/settings/security/{service}';
export const LDAP_ROUTE = '/settings/ldap';
export const INTERNAL_SETTINGS_ROUTE = '/internalSettings';

/** Service names of the per-service security settings (reference, "Security settings"). */
export const SECURITY_SERVICES = ['data', 'fullTextSearch', 'index', 'eventing', 'query', 'analytics', 'backup', 'clusterManager'] as const;
export type SecurityService = (typeof SECURITY_SERVICES)[number];

export const TLS_VERSIONS = ['tlsv1', 'tlsv1.1', 'tlsv1.2', 'tlsv1.3'] as const;
export const ENCRYPTION_LEVELS = ['control', 'all', 'strict'] as const;

/** Couchbase answers booleans as JSON booleans; some older settings come back as strings. */
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((s) => s === 'true')]);

/** Settings that exist both globally and per service. */
export const securityServiceSchema = z.looseObject({
  tlsMinVersion: z.string().nullish(),
  honorCipherOrder: flag.nullish(),
  cipherSuites: checkedArray(z.string()).nullish(),
  supportedCipherSuites: checkedArray(z.string()).nullish(),
});
export type SecurityServiceSettings = z.output<typeof securityServiceSchema>;

/** GET /settings/security. Per-service sub-objects (7.x) stay unknown here and are parsed one by one. */
export const securityGlobalSchema = z.looseObject({
  disableUIOverHttp: flag.nullish(),
  disableUIOverHttps: flag.nullish(),
  disableWWWAuthenticate: flag.nullish(),
  clusterEncryptionLevel: z.string().nullish(),
  tlsMinVersion: z.string().nullish(),
  honorCipherOrder: flag.nullish(),
  cipherSuites: checkedArray(z.string()).nullish(),
});
export type SecurityGlobalSettings = z.output<typeof securityGlobalSchema>;

/** `hosts` is an array on read, a comma-separated string on write; accept both. */
const hosts = z.union([
  checkedArray(z.string()),
  z.string().transform((s) =>
    s
      .split(',')
      .map((h) => h.trim())
      .filter((h) => h !== ''),
  ),
]);

/** GET /settings/ldap, only the posture fields (see the file comment: secrets are stripped here). */
export const ldapSchema = z.object({
  authenticationEnabled: flag.nullish(),
  authorizationEnabled: flag.nullish(),
  hosts: hosts.nullish(),
  port: z.number().nullish(),
  /** `StartTLSExtension`, `TLS`, `false` (string or boolean); 7.6 answers `None` when unset. */
  encryption: z.union([z.string(), z.boolean()]).nullish(),
  serverCertValidation: flag.nullish(),
  maxParallelConnections: z.number().nullish(),
  maxCacheSize: z.number().nullish(),
  /** ms */
  cacheValueLifetime: z.number().nullish(),
  /** ms */
  requestTimeout: z.number().nullish(),
  nestedGroupsEnabled: flag.nullish(),
  nestedGroupsMaxDepth: z.number().nullish(),
});
export type LdapSettings = z.output<typeof ldapSchema>;

export const internalSettingsSchema = z.looseObject({
  indexAwareRebalanceDisabled: flag.nullish(),
});

/**
 * Security settings of the simulator: GET/POST /settings/security and /settings/security/:service,
 * GET /settings/ldap and GET /internalSettings. Every route needs a security role (the limited user gets 403
 * with Couchbase's `permissions` body).
 *
 * Scenarios:
 *   default   hardened: tlsMinVersion tlsv1.2 everywhere, UI over http disabled, node-to-node encryption
 *             `all`; LDAP authentication on over TLS with certificate validation; index-aware rebalance on.
 *   demo      weak spots: the query service accepts tlsv1.1, UI over http enabled, node-to-node encryption
 *             off (no clusterEncryptionLevel), LDAP enabled with `encryption: false` and no certificate
 *             validation.
 *   incident  as demo, plus indexAwareRebalanceDisabled true.
 * Services without a node running them (analytics and eventing with the default node layout) answer 404 on
 * their per-service route and have no sub-object in the global answer.
 *
 * The LDAP bind password lives in this module's state (`simSecurity(ctx).ldap.bindPass`) and is answered
 * masked ('**********'), as Couchbase does; a test greps every metric and log line of a run for it.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SimContext, SimModule } from '../types.js';
import { simCertificates } from './certificates.js';

const MASK = '**********';

const SUPPORTED: Record<string, string[]> = {
  data: ['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA'],
  fullTextSearch: ['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'],
  index: ['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'],
  eventing: ['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_AES_128_GCM_SHA256', 'TLS_CHACHA20_POLY1305_SHA256'],
  query: ['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'],
  analytics: ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256'],
  backup: ['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_RSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_AES_128_GCM_SHA256', 'TLS_CHACHA20_POLY1305_SHA256'],
  clusterManager: ['TLS_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_256_GCM_SHA384'],
};

/** Which Couchbase node service (SimNode.services) provides each security service. */
const PROVIDER: Record<string, string | undefined> = {
  data: 'kv',
  fullTextSearch: 'fts',
  index: 'index',
  eventing: 'eventing',
  query: 'n1ql',
  analytics: 'cbas',
  backup: 'backup',
  clusterManager: undefined, // every node
};

interface ServiceSettings {
  tlsMinVersion?: string;
  honorCipherOrder?: boolean;
  cipherSuites?: string[];
}

export interface SimSecurity {
  global: {
    disableUIOverHttp: boolean;
    disableUIOverHttps: boolean;
    disableWWWAuthenticate: boolean;
    tlsMinVersion: string;
    cipherSuites: string[];
    honorCipherOrder: boolean;
    clusterEncryptionLevel: string | undefined;
  };
  services: Record<string, ServiceSettings>;
  ldap: {
    authenticationEnabled: boolean;
    authorizationEnabled: boolean;
    hosts: string[];
    port: number;
    encryption: string;
    serverCertValidation: boolean;
    bindDN: string;
    /** The secret: never answered unmasked. */
    bindPass: string;
    groupsQuery: string;
    userDNMapping: { template: string };
    maxParallelConnections: number;
    maxCacheSize: number;
    cacheValueLifetime: number;
    requestTimeout: number;
    nestedGroupsEnabled: boolean;
    nestedGroupsMaxDepth: number;
  };
  indexAwareRebalanceDisabled: boolean;
}

function build(ctx: SimContext): SimSecurity {
  const weak = ctx.options.scenario === 'demo' || ctx.options.scenario === 'incident';
  const secret = `cbsim-ldap-bind-${createHash('sha256').update(`ldap:${ctx.options.seed}`).digest('hex').slice(0, 20)}`;
  return {
    global: {
      disableUIOverHttp: !weak,
      disableUIOverHttps: false,
      disableWWWAuthenticate: false,
      tlsMinVersion: 'tlsv1.2',
      cipherSuites: [],
      honorCipherOrder: true,
      clusterEncryptionLevel: weak ? undefined : 'all',
    },
    services: {
      data: { cipherSuites: ['TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_256_GCM_SHA384'], tlsMinVersion: 'tlsv1.2', honorCipherOrder: true },
      ...(weak ? { query: { tlsMinVersion: 'tlsv1.1' } } : {}),
    },
    ldap: {
      authenticationEnabled: true,
      authorizationEnabled: !weak,
      hosts: ['ldap1.cbsim.local', 'ldap2.cbsim.local'],
      port: weak ? 389 : 636,
      encryption: weak ? 'false' : 'TLS',
      serverCertValidation: !weak,
      bindDN: 'cn=cbsim-bind,ou=services,dc=cbsim,dc=local',
      bindPass: secret,
      groupsQuery: 'ou=groups,dc=cbsim,dc=local??one?(member=%D)',
      userDNMapping: { template: 'uid=%u,ou=users,dc=cbsim,dc=local' },
      maxParallelConnections: 100,
      maxCacheSize: 10_000,
      cacheValueLifetime: 300_000,
      requestTimeout: 5000,
      nestedGroupsEnabled: !weak,
      nestedGroupsMaxDepth: 10,
    },
    indexAwareRebalanceDisabled: ctx.options.scenario === 'incident',
  };
}

export function simSecurity(ctx: SimContext): SimSecurity {
  return ctx.area('security', () => build(ctx));
}

/** Security services with at least one node running them (the cluster manager runs everywhere). */
function available(ctx: SimContext, service: string): boolean {
  if (!(service in SUPPORTED)) return false;
  const p = PROVIDER[service];
  return p === undefined || ctx.nodes.some((n) => n.services.includes(p));
}

function serviceView(ctx: SimContext, service: string): Record<string, unknown> {
  const own = simSecurity(ctx).services[service] ?? {};
  return { ...own, supportedCipherSuites: SUPPORTED[service] ?? [] };
}

function forbidden(ctx: SimContext, req: FastifyRequest, reply: FastifyReply, permission = 'cluster.admin.security!read'): boolean {
  if (ctx.userOf(req) === 'admin') return false;
  void reply.code(403).send({ message: 'Forbidden. User needs the following permissions', permissions: [permission] });
  return true;
}

const TLS = ['tlsv1', 'tlsv1.1', 'tlsv1.2', 'tlsv1.3'];

/** Apply a form POST to a scope; returns Couchbase-style error strings (empty when accepted). */
function applyForm(target: ServiceSettings & Record<string, unknown>, body: string, global: boolean): string[] {
  const form = new URLSearchParams(body);
  const errors: string[] = [];
  const bool = (k: string): void => {
    const v = form.get(k);
    if (v === null) return;
    if (v !== 'true' && v !== 'false') errors.push(`${k} - Accepted values are 'true' and 'false'.`);
    else target[k] = v === 'true';
  };
  const tls = form.get('tlsMinVersion');
  if (tls !== null) {
    if (!TLS.includes(tls) || (global && tls === 'tlsv1.3')) errors.push('tlsMinVersion - Supported TLS versions are tlsv1.3, tlsv1.2, tlsv1.1, tlsv1');
    else target.tlsMinVersion = tls;
  }
  bool('honorCipherOrder');
  const ciphers = form.get('cipherSuites');
  if (ciphers !== null) {
    try {
      const list: unknown = JSON.parse(ciphers);
      if (!Array.isArray(list) || !list.every((c) => typeof c === 'string')) throw new Error('not a list');
      target.cipherSuites = list as string[];
    } catch {
      errors.push('cipherSuites - Invalid format. Expecting a list of ciphers.');
    }
  }
  if (global) {
    for (const k of ['disableUIOverHttp', 'disableUIOverHttps', 'disableWWWAuthenticate']) bool(k);
    const level = form.get('clusterEncryptionLevel');
    if (level !== null) {
      if (!['control', 'all', 'strict'].includes(level)) errors.push('clusterEncryptionLevel - Cluster encryption level must be one of ["control","all","strict"]');
      else if (target.clusterEncryptionLevel === undefined) errors.push("clusterEncryptionLevel - Can't set cluster encryption level when cluster encryption is disabled.");
      else target.clusterEncryptionLevel = level;
    }
  }
  return errors;
}

export const securityModule: SimModule = (app, ctx) => {
  simSecurity(ctx);
  simCertificates(ctx);

  app.get('/settings/security', async (req, reply) => {
    if (forbidden(ctx, req, reply)) return reply;
    const s = simSecurity(ctx);
    const { clusterEncryptionLevel, ...g } = s.global;
    const out: Record<string, unknown> = {
      ...g,
      ...(clusterEncryptionLevel !== undefined ? { clusterEncryptionLevel } : {}),
      responseHeaders: [],
      allowNonLocalCACertUpload: simCertificates(ctx).allowNonLocalUpload,
      allowedHosts: ['*'],
    };
    for (const service of Object.keys(SUPPORTED)) if (available(ctx, service)) out[service] = serviceView(ctx, service);
    return out;
  });

  app.get<{ Params: { service: string } }>('/settings/security/:service', async (req, reply) => {
    if (forbidden(ctx, req, reply)) return reply;
    if (!available(ctx, req.params.service)) return reply.code(404).type('text/plain').send('Not found.');
    return serviceView(ctx, req.params.service);
  });

  app.post('/settings/security', async (req, reply) => {
    if (forbidden(ctx, req, reply, 'cluster.admin.security!write')) return reply;
    const errors = applyForm(simSecurity(ctx).global as unknown as ServiceSettings & Record<string, unknown>, String(req.body ?? ''), true);
    return errors.length > 0 ? reply.code(400).send({ errors }) : [];
  });

  app.post<{ Params: { service: string } }>('/settings/security/:service', async (req, reply) => {
    if (forbidden(ctx, req, reply, 'cluster.admin.security!write')) return reply;
    if (!available(ctx, req.params.service)) return reply.code(404).type('text/plain').send('Not found.');
    const s = simSecurity(ctx);
    const target = (s.services[req.params.service] ??= {});
    const errors = applyForm(target as ServiceSettings & Record<string, unknown>, String(req.body ?? ''), false);
    return errors.length > 0 ? reply.code(400).send({ errors }) : [];
  });

  app.get('/settings/ldap', async (req, reply) => {
    if (forbidden(ctx, req, reply)) return reply;
    const l = simSecurity(ctx).ldap;
    return {
      ...l,
      bindPass: l.bindPass === '' ? '' : MASK,
      cacert: simCertificates(ctx).root.pem,
      failOnMaxDepth: false,
      maxGroupCacheSize: 1000,
      middleboxCompMode: true,
    };
  });

  app.get('/internalSettings', async (req, reply) => {
    if (forbidden(ctx, req, reply, 'cluster.admin.settings!read')) return reply;
    return {
      indexAwareRebalanceDisabled: simSecurity(ctx).indexAwareRebalanceDisabled,
      rebalanceIndexWaitingDisabled: false,
      rebalanceIndexPausingDisabled: false,
      rebalanceIgnoreViewCompactions: false,
      rebalanceMovesPerNode: 4,
      rebalanceMovesBeforeCompaction: 64,
      maxParallelIndexers: 4,
      maxParallelReplicaIndexers: 2,
      maxBucketCount: 30,
      gotraceback: 'single',
    };
  });
};

/**
 * Certificate endpoints of the simulator, answered with REAL certificates generated at start-up
 * (src/simulator/pki.ts): a root CA, an intermediate CA it signs, and one certificate per node signed by the
 * intermediate; a node's `pem` is its chain (node certificate, then the intermediate), as chain.pem is.
 *
 * Routes: GET /pools/default/trustedCAs (no auth needed: full view for the admin, the limited view — id,
 * subject, notBefore, notAfter, pem — for anyone else), GET /pools/default/certificate/node/:node (security
 * role: the limited user gets 403), the deprecated GET /pools/default/certificate[?extended=true] and
 * GET /settings/security/allowNonLocalCACertUpload.
 *
 * Scenarios (all dates relative to the simulator's start, whole seconds):
 *   default   root CA valid 5 years (1825 d), intermediate 1095 d, node certificates 365 d; only the uploaded
 *             root is trusted (the generated CA was removed); no warnings; no passphrase registered.
 *   demo      root CA expires in 20 days, intermediate 400 d, node certificates 90 d; the generated CA is
 *             still trusted (warning `self_signed`); node 2 has a `plain` key passphrase registered.
 *   incident  root CA expires in 3 days, intermediate 730 d, node certificates 365 d; generated CA with its
 *             warning; node 2 has a `plain` passphrase.
 * Knobs: caExpiresInDays, intermediateExpiresInDays, nodeCertExpiresInDays (numbers), preTrustedCAs (true:
 * a pre-7.1 cluster — trustedCAs answers 404, the deprecated extended certificate call answers, the node
 * certificate has the 7.0 shape), allowNonLocalCACertUpload (boolean, default false).
 *
 * The registered plain passphrase is kept in this module's state (the secret a leak test looks for) and is
 * only ever answered masked, as Couchbase does.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createCertificate } from '../pki.js';
import type { IssuedCertificate } from '../pki.js';
import type { SimContext, SimModule, SimNode } from '../types.js';

const DAY = 86_400_000;
const MASK = '**********';

interface Scenario {
  caDays: number;
  intermediateDays: number;
  nodeDays: number;
  generatedCaTrusted: boolean;
  /** Index of the node with a plain passphrase, or -1. */
  plainPassphraseNode: number;
}

const SCENARIOS: Record<string, Scenario> = {
  default: { caDays: 1825, intermediateDays: 1095, nodeDays: 365, generatedCaTrusted: false, plainPassphraseNode: -1 },
  demo: { caDays: 20, intermediateDays: 400, nodeDays: 90, generatedCaTrusted: true, plainPassphraseNode: 1 },
  incident: { caDays: 3, intermediateDays: 730, nodeDays: 365, generatedCaTrusted: true, plainPassphraseNode: 1 },
};

export interface SimNodeCertificate {
  readonly node: SimNode;
  readonly cert: IssuedCertificate;
  /** The registered plain passphrase (a secret: answered masked only), or undefined. */
  readonly plainPassphrase: string | undefined;
}

export interface SimCertificates {
  readonly root: IssuedCertificate;
  readonly intermediate: IssuedCertificate;
  /** Couchbase's own self-signed CA (id 0), trusted only in some scenarios. */
  readonly generated: IssuedCertificate;
  readonly generatedTrusted: boolean;
  readonly nodes: readonly SimNodeCertificate[];
  readonly preTrustedCAs: boolean;
  readonly allowNonLocalUpload: boolean;
}

function knobNumber(ctx: SimContext, name: string, fallback: number): number {
  const v = ctx.options.knobs[name];
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

function build(ctx: SimContext): SimCertificates {
  const sc = SCENARIOS[ctx.options.scenario] ?? (SCENARIOS.default as Scenario);
  const t0 = ctx.startedAt;
  const at = (days: number): Date => new Date(t0 + days * DAY);
  const root = createCertificate({ subject: { O: 'cbsim', CN: 'cbsim Root CA' }, notBefore: at(-365), notAfter: at(knobNumber(ctx, 'caExpiresInDays', sc.caDays)), ca: true });
  const intermediate = createCertificate(
    { subject: { O: 'cbsim', CN: 'cbsim Intermediate CA' }, notBefore: at(-180), notAfter: at(knobNumber(ctx, 'intermediateExpiresInDays', sc.intermediateDays)), ca: true },
    root,
  );
  const tag = createHash('md5').update(`generated-ca-${ctx.options.seed}`).digest('hex').slice(0, 8);
  const generated = createCertificate({
    subject: { CN: `Couchbase Server ${tag}` },
    notBefore: new Date(Date.UTC(2013, 0, 1)),
    notAfter: new Date(Date.UTC(2049, 11, 31, 23, 59, 59)),
    ca: true,
  });
  const nodeDays = knobNumber(ctx, 'nodeCertExpiresInDays', sc.nodeDays);
  const nodes = ctx.nodes.map((node, i) => {
    const host = node.hostname.replace(/:\d+$/, '');
    const cert = createCertificate({ subject: { CN: host }, notBefore: at(-30 - i), notAfter: at(nodeDays - i), ca: false, altNames: [host, '127.0.0.1'] }, intermediate);
    const secret = i === sc.plainPassphraseNode ? `cbsim-key-pass-${createHash('sha256').update(`${ctx.options.seed}:${i}`).digest('hex').slice(0, 16)}` : undefined;
    return { node, cert, plainPassphrase: secret };
  });
  return {
    root,
    intermediate,
    generated,
    generatedTrusted: sc.generatedCaTrusted,
    nodes,
    preTrustedCAs: ctx.options.knobs.preTrustedCAs === true,
    allowNonLocalUpload: ctx.options.knobs.allowNonLocalCACertUpload === true,
  };
}

/** The simulator's certificates (generated on first use; the module asks at registration, i.e. start-up). */
export function simCertificates(ctx: SimContext): SimCertificates {
  return ctx.area('certificates', () => build(ctx));
}

const iso = (d: Date): string => d.toISOString();

function trustedCAs(ctx: SimContext, full: boolean): Array<Record<string, unknown>> {
  const s = simCertificates(ctx);
  const out: Array<Record<string, unknown>> = [];
  const view = (id: number, c: IssuedCertificate, extra: Record<string, unknown>): Record<string, unknown> => {
    const base = { id, subject: c.subjectText, notBefore: iso(c.notBefore), notAfter: iso(c.notAfter), pem: `${c.pem}\n` };
    return full ? { ...base, ...extra } : base;
  };
  if (s.generatedTrusted) {
    out.push(
      view(0, s.generated, {
        type: 'generated',
        warnings: [
          {
            name: 'self_signed',
            message: 'Out-of-the-box certificates are self-signed. To further secure your system, you must create new X.509 certificates signed by a trusted CA.',
            severity: 2,
            severityName: 'minimal',
          },
        ],
        nodes: [],
      }),
    );
  }
  out.push(
    view(1, s.root, {
      type: 'uploaded',
      warnings: [],
      loadTimestamp: iso(new Date(Math.floor((ctx.startedAt - 7 * DAY) / 1000) * 1000)),
      loadHost: ctx.nodes[0]?.hostname.replace(/:\d+$/, '') ?? '127.0.0.1',
      loadFile: '/opt/couchbase/var/lib/couchbase/inbox/CA/ca.pem',
      nodes: ctx.nodes.map((n) => n.hostname),
    }),
  );
  return out;
}

/** The node a `{node}` path segment names: its hostname, or the simulator's own address for node 1. */
function findNode(ctx: SimContext, name: string): SimNodeCertificate | undefined {
  const s = simCertificates(ctx);
  return s.nodes.find((n) => n.node.hostname === name || (n.node.thisNode && (name === `127.0.0.1:${ctx.port()}` || name === `localhost:${ctx.port()}` || name === '127.0.0.1')));
}

function needsSecurityRole(ctx: SimContext, req: FastifyRequest, reply: FastifyReply): boolean {
  if (ctx.userOf(req) === 'admin') return false;
  void reply.code(403).send({ message: 'Forbidden. User needs the following permissions', permissions: ['cluster.admin.security!read'] });
  return true;
}

export const certificatesModule: SimModule = (app, ctx) => {
  simCertificates(ctx); // generate at start-up, not on the first request

  app.get('/pools/default/trustedCAs', { config: { auth: 'anonymous' } }, async (req, reply) => {
    if (simCertificates(ctx).preTrustedCAs) return reply.code(404).type('text/plain').send('Not found.');
    return trustedCAs(ctx, ctx.userOf(req) === 'admin');
  });

  app.get<{ Params: { node: string } }>('/pools/default/certificate/node/:node', async (req, reply) => {
    if (needsSecurityRole(ctx, req, reply)) return reply;
    const n = findNode(ctx, req.params.node);
    if (!n) return reply.code(404).send({ error: 'Node is not found, make sure the ip address/hostname matches the ip address/hostname used by Couchbase' });
    const c = n.cert;
    const chain = `${c.pem}${simCertificates(ctx).intermediate.pem}\n`;
    if (simCertificates(ctx).preTrustedCAs) return { subject: c.subjectText, expires: iso(c.notAfter), pem: chain };
    return {
      warnings: [],
      subject: c.subjectText,
      expires: iso(c.notAfter),
      type: 'uploaded',
      pem: chain,
      privateKeyPassphrase: n.plainPassphrase !== undefined ? { type: 'plain', password: MASK } : {},
    };
  });

  app.get<{ Querystring: { extended?: string } }>('/pools/default/certificate', async (req, reply) => {
    const s = simCertificates(ctx);
    if (!s.preTrustedCAs) {
      return reply.code(400).type('application/json').send(JSON.stringify('deprecated, please use /pools/default/trustedCAs'));
    }
    if (req.query.extended !== 'true') return reply.type('text/plain').send(s.root.pem);
    return {
      cert: { type: 'uploaded', pem: s.root.pem, subject: s.root.subjectText, expires: iso(s.root.notAfter) },
      warnings: [],
    };
  });

  app.get('/settings/security/allowNonLocalCACertUpload', async (req, reply) => {
    if (simCertificates(ctx).preTrustedCAs) return reply.code(404).type('text/plain').send('Not found.');
    if (needsSecurityRole(ctx, req, reply)) return reply;
    return reply.type('application/json').send(JSON.stringify(simCertificates(ctx).allowNonLocalUpload));
  });
};

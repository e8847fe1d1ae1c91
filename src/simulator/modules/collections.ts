/**
 * GET /pools/default/buckets/:bucket/scopes in the 7.6 shape (pools-default-buckets-name-scopes/
 * docs-server-7.6plus.json): `_default` and `_system` scopes in every bucket, plus, per bucket, a deterministic
 * number (0–3) of application scopes with 1–4 collections each. The manifest uid is hex, as on a real cluster.
 * Memcached buckets and unknown buckets answer 404 (`Requested resource not found.`), as Couchbase does.
 * Same in every scenario (collections do not move on their own).
 */
import type { SimModule } from '../types.js';

const SCOPE_NAMES = ['inventory', 'tenant_agent_00', 'tenant_agent_01'];
const COLLECTION_NAMES = ['airline', 'airport', 'hotel', 'route'];

export const collectionsModule: SimModule = (app, ctx) => {
  app.get('/pools/default/buckets/:bucket/scopes', async (req, reply) => {
    const { bucket } = req.params as { bucket: string };
    const b = ctx.buckets.find((x) => x.name === bucket);
    if (!b || b.bucketType === 'memcached') return reply.code(404).type('text/plain').send('Requested resource not found.\r\n');
    let uid = 8;
    const scopes: Array<{ name: string; uid: string; collections: Array<Record<string, unknown>> }> = [
      {
        name: '_default',
        uid: '0',
        collections: [{ name: '_default', uid: '0', history: false }],
      },
      {
        name: '_system',
        uid: '8',
        collections: [
          { name: '_query', uid: '9', maxTTL: 0, history: false },
          { name: '_mobile', uid: '8', maxTTL: 0, history: false },
        ],
      },
    ];
    const extra = Math.floor(ctx.rand(`scopes:${b.name}`) * 4);
    let cid = 10;
    for (let i = 0; i < extra; i++) {
      uid++;
      const n = 1 + Math.floor(ctx.rand(`collections:${b.name}:${i}`) * 4);
      scopes.push({
        name: SCOPE_NAMES[i] as string,
        uid: uid.toString(16),
        collections: COLLECTION_NAMES.slice(0, n).map((name) => ({ name, uid: (cid++).toString(16), maxTTL: 0, history: false })),
      });
    }
    return { uid: (uid + cid).toString(16), scopes };
  });
};

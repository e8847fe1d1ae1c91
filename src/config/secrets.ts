/**
 * The configuration's secrets for this thread's redactor, in a module of its own so that the collection worker
 * can register them without loading the configuration loader (YAML, web config).
 */
import type { WebSettings } from './webconfig.js';
import type { ClusterConfig } from './types.js';
import { processRedactor } from '../redact.js';

/**
 * Registers every secret of a configuration with this thread's redactor (src/redact.ts). loadConfig() does it;
 * a worker thread that receives a configuration must call it too, since the redactor is per thread.
 */
export function registerConfigSecrets(config: {
  readonly clusters: ReadonlyArray<Pick<ClusterConfig, 'username' | 'password'>>;
  readonly webhooks: { readonly syncGateway?: { readonly token: string } | undefined };
  readonly web: { readonly settings?: WebSettings | undefined };
}): void {
  for (const c of config.clusters) processRedactor.addCredentials(c.username, c.password);
  processRedactor.add(config.webhooks.syncGateway?.token);
  for (const hash of Object.values(config.web.settings?.basicAuthUsers ?? {})) processRedactor.add(hash);
}


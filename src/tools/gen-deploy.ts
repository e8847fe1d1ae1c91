/**
 * Generated deployment files: the kustomize base's PrometheusRule, a copy of the alert bundle's
 * alerts/kubernetes/prometheusrule.yml (kustomize refuses to load a file outside the kustomization's
 * directory, so the base cannot point at the original).
 */
import type { Files } from './files.js';

export const KUSTOMIZE_RULE = 'deploy/kubernetes/base/prometheusrule.yaml';
const SOURCE_RULE = 'alerts/kubernetes/prometheusrule.yml';

/** `alerts`: what renderAlerts() produced. */
export function renderDeploy(alerts: Files): Files {
  const rule = alerts[SOURCE_RULE];
  if (rule === undefined) throw new Error(`${SOURCE_RULE} is not among the rendered alert files`);
  return { [KUSTOMIZE_RULE]: `# Copy of ${SOURCE_RULE} for the kustomize base, written by \`npm run generate\`.\n${rule}` };
}

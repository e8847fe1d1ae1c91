/**
 * deploy/kubernetes: every kustomization renders with `kubectl kustomize`, every object (rendered, and the
 * Secret example kept out of the kustomization) validates against the Kubernetes and prometheus-operator
 * schemas of `kubernetes-models`, and the objects agree with each other and with cbwatch: the config in the
 * ConfigMap loads, the password file it names is where the Secret is mounted, the ServiceMonitor selects the
 * Service's port, the resources cover bench/RESULTS.md's peak RSS, and each shard's `--shard i/N` matches
 * the StatefulSet's replicas.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as apps from 'kubernetes-models/apps/v1';
import * as core from 'kubernetes-models/v1';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as monitoring from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { parseShard } from '../../src/config/load.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { staleFiles } from '../../src/tools/files.js';
import { renderAlerts } from '../../src/tools/gen-alerts.js';
import { KUSTOMIZE_RULE, renderDeploy } from '../../src/tools/gen-deploy.js';
import { findBinary } from '../helpers/tools.js';

const kubectl = findBinary('kubectl');
if (!kubectl && process.env.CI === 'true') throw new Error('kubectl not found: CI needs it to render deploy/kubernetes (bash .ci/run checks)');
if (!kubectl) console.warn('skipping kubectl kustomize: kubectl not found');

const K8S = join(PACKAGE_ROOT, 'deploy', 'kubernetes');
const KUSTOMIZATIONS = ['base', 'overlays/sharded'];

// Test-local: manifests are walked loosely; the schemas above do the typing.
type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: any };

/** The model class for each apiVersion/kind cbwatch ships; anything else is an error. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ServiceAccount': core.ServiceAccount,
  'v1/ConfigMap': core.ConfigMap,
  'v1/Secret': core.Secret,
  'v1/Service': core.Service,
  'apps/v1/Deployment': apps.Deployment,
  'apps/v1/StatefulSet': apps.StatefulSet,
  'networking.k8s.io/v1/NetworkPolicy': networking.NetworkPolicy,
  'monitoring.coreos.com/v1/ServiceMonitor': monitoring.ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': monitoring.PrometheusRule,
};

function validate(o: Obj): void {
  const Model = MODELS[`${o.apiVersion}/${o.kind}`];
  if (!Model) throw new Error(`no schema for ${o.apiVersion}/${o.kind}`);
  new Model(o as never).validate();
}

function render(dir: string): Obj[] {
  const text = execFileSync(kubectl as string, ['kustomize', join(K8S, dir)], { encoding: 'utf8' });
  return parseAllDocuments(text).map((d) => d.toJS() as Obj).filter(Boolean);
}

const tmp = mkdtempSync(join(tmpdir(), 'cbwatch-k8s-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Loads the ConfigMap's cbwatch.yml as cbwatch would, with the Secret's key at the mounted path. */
function loadMountedConfig(objs: Obj[], workload: Obj): ReturnType<typeof loadConfig> {
  const pod = workload.spec.template.spec;
  const container = pod.containers[0];
  const args: string[] = container.args;
  const configPath = args[args.indexOf('--config') + 1] as string;
  const mountOf = (vol: { name: string }) => container.volumeMounts.find((m: { name: string }) => m.name === vol.name).mountPath as string;
  const cmVol = pod.volumes.find((v: { configMap?: unknown }) => v.configMap);
  const secretVol = pod.volumes.find((v: { secret?: unknown }) => v.secret);
  const cm = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === cmVol.configMap.name);
  expect(cm, 'the ConfigMap the pod mounts is rendered').toBeDefined();
  expect(configPath.startsWith(`${mountOf(cmVol)}/`)).toBe(true);
  const text: string = cm?.data[configPath.slice(mountOf(cmVol).length + 1)];
  // Every password_file must be a key of the Secret at its mount path.
  const secretMount = mountOf(secretVol);
  const secret = parse(readFileSync(join(K8S, 'base', 'secret.example.yaml'), 'utf8')) as Obj;
  expect(secret.metadata.name).toBe(secretVol.secret.secretName);
  const secretDir = join(tmp, `secrets-${Math.random().toString(36).slice(2)}`);
  execFileSync('mkdir', ['-p', secretDir]);
  for (const [k, v] of Object.entries(secret.stringData as Record<string, string>)) writeFileSync(join(secretDir, k), v);
  const raw = parse(text) as { clusters: { password_file?: string }[] };
  for (const c of raw.clusters) {
    expect(c.password_file?.startsWith(`${secretMount}/`), c.password_file).toBe(true);
    expect(Object.keys(secret.stringData)).toContain(c.password_file?.slice(secretMount.length + 1));
  }
  const file = join(tmp, `cbwatch-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(file, text.split(`${secretMount}/`).join(`${secretDir}/`));
  return loadConfig({ config: file }, {});
}

describe('deploy/kubernetes', () => {
  it('the base PrometheusRule is the generated copy of alerts/kubernetes/prometheusrule.yml', () => {
    const alerts = renderAlerts();
    const files = renderDeploy(alerts);
    expect(staleFiles(PACKAGE_ROOT, files), 'run npm run generate').toEqual([]);
    const copy = readFileSync(join(PACKAGE_ROOT, KUSTOMIZE_RULE), 'utf8');
    expect(copy.endsWith(alerts['alerts/kubernetes/prometheusrule.yml'] as string)).toBe(true);
  });

  it('every YAML file in the tree parses and every object in it validates (including the Secret example)', () => {
    const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
    const files = walk(K8S).filter((f) => /\.ya?ml$/.test(f));
    expect(files.length).toBeGreaterThan(8);
    let objects = 0;
    for (const f of files) {
      for (const doc of parseAllDocuments(readFileSync(f, 'utf8'))) {
        expect(doc.errors, f).toEqual([]);
        const o = doc.toJS() as Obj | null;
        if (!o || o.kind === 'Kustomization' || !o.apiVersion || f.endsWith('config.yaml')) continue;
        expect(() => validate(o), f).not.toThrow();
        objects++;
      }
    }
    expect(objects).toBeGreaterThan(6);
  });

  it('rejects an object a schema refuses (the validator is live)', () => {
    const bad = { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'x' }, spec: { selector: {}, endpoints: [{ port: 'metrics', interval: 'soon' }] } };
    expect(() => validate(bad)).toThrow(/interval/);
  });
});

describe.skipIf(!kubectl)('kubectl kustomize', () => {
  const rendered = new Map<string, Obj[]>();
  for (const dir of KUSTOMIZATIONS) {
    it(`${dir}: renders, and every object validates`, () => {
      const objs = render(dir);
      rendered.set(dir, objs);
      expect(objs.length).toBeGreaterThan(5);
      for (const o of objs) {
        expect(() => validate(o), `${o.kind}/${o.metadata.name}`).not.toThrow();
        expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe('monitoring');
        expect(o.metadata.labels?.['app.kubernetes.io/part-of'], `${o.kind}/${o.metadata.name}`).toBe('cbwatch');
      }
      const kinds = objs.map((o) => o.kind).sort();
      expect(kinds).toEqual(expect.arrayContaining(['ConfigMap', 'NetworkPolicy', 'PrometheusRule', 'Service', 'ServiceAccount', 'ServiceMonitor']));
      // The Secret example is not applied: re-applying never overwrites a real password.
      expect(kinds).not.toContain('Secret');
    });

    it(`${dir}: the objects agree with each other and with cbwatch`, () => {
      const objs = rendered.get(dir) ?? render(dir);
      const workloads = objs.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet');
      expect(workloads).toHaveLength(1);
      const w = workloads[0] as Obj;
      const pod = w.spec.template.spec;
      const c = pod.containers[0];
      expect(c.image).toMatch(/^[\w.-]+(\/[\w.-]+)+:[\w.-]+$/);
      // Hardening.
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(pod.automountServiceAccountToken).toBe(false);
      // Resources: the memory request covers the benchmark's peak RSS (bench/RESULTS.md), the limit more.
      const bench = readFileSync(join(PACKAGE_ROOT, 'bench', 'RESULTS.md'), 'utf8');
      // The base is sized for one typical cluster: the realistic scenario's section (the scale curve and the
      // fleet are sized per deployment, see deploy/kubernetes/README.md).
      const realistic = /<!-- section:realistic -->([\s\S]*?)<!-- end:realistic -->/.exec(bench)?.[1] ?? '';
      const peaks = [...realistic.matchAll(/peak RSS[^|]*\| ([\d.]+) MB/g)].map((m) => Number(m[1]));
      expect(peaks.length).toBeGreaterThan(0);
      const mi = (q: string): number => Number(/^(\d+)Mi$/.exec(q)?.[1]);
      expect(mi(c.resources.requests.memory) * 1.048576).toBeGreaterThan(Math.max(...peaks));
      expect(mi(c.resources.limits.memory)).toBeGreaterThan(mi(c.resources.requests.memory));
      expect(c.resources.requests.cpu).toBeDefined();
      // Probes on cbwatch's endpoints, through the named port.
      expect(c.livenessProbe.httpGet).toEqual({ path: '/-/healthy', port: 'metrics' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/-/ready', port: 'metrics' });
      expect(c.ports).toContainEqual(expect.objectContaining({ name: 'metrics', containerPort: 9420 }));
      // Service → pods, ServiceMonitor → Service port, NetworkPolicy → pods and port.
      const svc = objs.find((o) => o.kind === 'Service') as Obj;
      for (const [k, v] of Object.entries(svc.spec.selector)) expect(w.spec.template.metadata.labels[k]).toBe(v);
      expect(svc.spec.ports).toContainEqual(expect.objectContaining({ name: 'metrics', targetPort: 'metrics' }));
      const sm = objs.find((o) => o.kind === 'ServiceMonitor') as Obj;
      for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) expect(svc.metadata.labels?.[k]).toBe(v);
      expect(sm.spec.endpoints.map((e: { port: string }) => e.port)).toEqual(['metrics']);
      const np = objs.find((o) => o.kind === 'NetworkPolicy') as Obj;
      for (const [k, v] of Object.entries(np.spec.podSelector.matchLabels)) expect(w.spec.template.metadata.labels[k]).toBe(v);
      expect(np.spec.ingress[0].ports).toContainEqual({ port: 'metrics', protocol: 'TCP' });
      const egressPorts = np.spec.egress.flatMap((e: { ports: { port: number }[] }) => e.ports.map((p) => p.port));
      expect(egressPorts).toEqual(expect.arrayContaining([53, 8091, 18091, 8094, 18094, 8097, 18097]));
      // The PrometheusRule's exporter alert selects the ServiceMonitor's job (the Service name).
      const rule = JSON.stringify(objs.find((o) => o.kind === 'PrometheusRule'));
      expect(rule).toContain('job=~\\"cbwatch.*\\"');
      expect(svc.metadata.name).toMatch(/^cbwatch/);
      // The mounted config loads, and its password files are keys of the Secret at its mount path.
      const config = loadMountedConfig(objs, w);
      expect(config.clusters.length).toBeGreaterThan(0);
      for (const cl of config.clusters) expect(cl.password).toBe('change-me');
    });
  }

  it('overlays/sharded: a StatefulSet whose pod index becomes --shard i/N with N = replicas, behind a headless Service', () => {
    const objs = rendered.get('overlays/sharded') ?? render('overlays/sharded');
    expect(objs.some((o) => o.kind === 'Deployment')).toBe(false);
    const sts = objs.find((o) => o.kind === 'StatefulSet') as Obj;
    const c = sts.spec.template.spec.containers[0];
    const args: string[] = c.args;
    const shardArg = args[args.indexOf('--shard') + 1] as string;
    const m = /^\$\((\w+)\)\/(\d+)$/.exec(shardArg);
    expect(m, shardArg).not.toBeNull();
    const [, envName, total] = m as RegExpExecArray;
    expect(Number(total)).toBe(sts.spec.replicas);
    const env = c.env.find((e: { name: string }) => e.name === envName);
    expect(env.valueFrom.fieldRef.fieldPath).toBe("metadata.labels['apps.kubernetes.io/pod-index']");
    // What each pod runs once Kubernetes expands $(SHARD_INDEX): valid for cbwatch, and every cluster of the
    // fleet lands in exactly one shard.
    const svc = objs.find((o) => o.kind === 'Service') as Obj;
    expect(svc.spec.clusterIP).toBe('None');
    expect(sts.spec.serviceName).toBe(svc.metadata.name);
    const fleet = loadMountedConfig(objs, sts).clusters.map((x) => x.name);
    const seen: string[] = [];
    for (let i = 0; i < sts.spec.replicas; i++) {
      const shard = shardArg.replace(`$(${envName})`, String(i));
      expect(parseShard(shard)).toEqual({ index: i, total: sts.spec.replicas });
      const cm = objs.find((o) => o.kind === 'ConfigMap') as Obj;
      const file = join(tmp, `shard-${i}.yml`);
      const secretDir = join(tmp, `shard-secrets-${i}`);
      execFileSync('mkdir', ['-p', secretDir]);
      writeFileSync(join(secretDir, 'couchbase-password'), 'x');
      writeFileSync(file, (cm.data['cbwatch.yml'] as string).split('/etc/cbwatch/secrets/').join(`${secretDir}/`));
      seen.push(...loadConfig({ config: file, shard }, {}, { allowNoClusters: true }).clusters.map((x) => x.name));
    }
    expect(seen.sort()).toEqual([...fleet].sort());
  });
});

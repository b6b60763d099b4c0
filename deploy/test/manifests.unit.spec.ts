import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { ConfigMap, Namespace, Service, ServiceAccount } from 'kubernetes-models/v1';
import { feedConfigSchema, runtimeConfigSchemaKeys } from './manifest-context.js';

const base = join(process.cwd(), 'deploy', 'base');

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/**
 * What `kustomize build deploy/base` produces for the features the base uses (namespace,
 * labels, image tags), computed here because no kustomize binary runs in CI.
 */
function render(): Manifest[] {
  const kustomization = parseAllDocuments(readFileSync(join(base, 'kustomization.yaml'), 'utf8'))[0]!.toJS() as {
    namespace: string;
    labels: Array<{ pairs: Record<string, string> }>;
    resources: string[];
    images: Array<{ name: string; newTag: string }>;
  };
  const tags = new Map(kustomization.images.map((image) => [image.name, `${image.name}:${image.newTag}`]));
  return kustomization.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(join(base, file), 'utf8')).map((doc) => {
      const manifest = doc.toJS() as Manifest;
      if (manifest.kind !== 'Namespace') manifest.metadata.namespace = kustomization.namespace;
      manifest.metadata.labels = { ...manifest.metadata.labels, ...Object.assign({}, ...kustomization.labels.map((l) => l.pairs)) };
      const pod = (manifest as { spec?: { template?: { spec?: { containers: Array<{ image: string }> } } } }).spec?.template?.spec;
      for (const container of pod?.containers ?? []) container.image = tags.get(container.image) ?? container.image;
      return manifest;
    }),
  );
}

const models: Record<string, new (data: never) => { validate(): void }> = {
  Namespace,
  ConfigMap,
  Service,
  ServiceAccount,
  Deployment,
  StatefulSet,
};

describe('deploy/base', () => {
  const manifests = render();
  const deployments = manifests.filter((m) => m.kind === 'Deployment') as unknown as Deployment[];

  it('holds only objects that pass the Kubernetes schemas', () => {
    for (const manifest of manifests) {
      const Model = models[manifest.kind];
      expect({ kind: manifest.kind, known: Model !== undefined }).toEqual({ kind: manifest.kind, known: true });
      expect(() => new Model!(manifest as never).validate()).not.toThrow();
    }
  });

  it('runs every app as a Deployment of the tagged image, non-root, with requests and limits', () => {
    expect(deployments.map((d) => d.metadata!.name).sort()).toEqual(['content', 'fanout', 'gateway', 'graph', 'timeline']);
    for (const deployment of deployments) {
      const pod = deployment.spec!.template.spec!;
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      for (const container of pod.containers) {
        expect(container.image).toBe('feedmill:0.1.0');
        expect(container.command).toEqual(['node', `apps/${deployment.metadata!.name}/dist/main.js`]);
        expect(container.resources?.requests).toBeDefined();
        expect(container.resources?.limits?.['memory']).toBeDefined();
        expect(container.securityContext?.allowPrivilegeEscalation).toBe(false);
      }
    }
  });

  it('runs fan-out and timelines as several replicas, and probes the gateway', () => {
    const byName = new Map(deployments.map((d) => [d.metadata!.name, d]));
    expect(byName.get('timeline')!.spec!.replicas).toBeGreaterThan(1);
    expect(byName.get('fanout')!.spec!.replicas).toBeGreaterThan(1);
    const gateway = byName.get('gateway')!.spec!.template.spec!.containers[0]!;
    expect(gateway.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(gateway.livenessProbe?.httpGet?.path).toBe('/healthz');
  });

  it('splits timelines in more partitions than replicas, claimed by leases, with one partition count for every app', () => {
    const env = (manifests.find((m) => m.metadata.name === 'feedmill-env') as unknown as ConfigMap).data!;
    const timeline = deployments.find((d) => d.metadata!.name === 'timeline')!;
    expect(Number(env['TIMELINE_PARTITIONS'])).toBeGreaterThanOrEqual(timeline.spec!.replicas!);
    expect(Number(env['TIMELINE_REPLICAS'])).toBe(timeline.spec!.replicas);
    // No fixed place: a Deployment's pods have none, so they claim partitions by leases.
    expect(env['TIMELINE_REPLICA_INDEX']).toBeUndefined();
    expect(timeline.spec!.strategy?.type).toBe('RollingUpdate');
    for (const deployment of deployments) {
      for (const container of deployment.spec!.template.spec!.containers) expect(container.envFrom).toContainEqual({ configMapRef: { name: 'feedmill-env' } });
    }
  });

  it('configures only variables feedmill reads, and a feed config it accepts', () => {
    const configMaps = new Map(manifests.filter((m) => m.kind === 'ConfigMap').map((m) => [m.metadata.name, m as unknown as ConfigMap]));
    for (const key of Object.keys(configMaps.get('feedmill-env')!.data!)) expect(runtimeConfigSchemaKeys).toContain(key);
    expect(feedConfigSchema.safeParse(JSON.parse(configMaps.get('feedmill-feeds')!.data!['feeds.json']!)).success).toBe(true);
  });
});

import { join } from 'node:path';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, PersistentVolumeClaim, Service, ServiceAccount, type IContainer } from 'kubernetes-models/v1';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { feedConfigSchema, runtimeConfigSchemaKeys } from './manifest-context.js';
import { kustomizeBuild, strategicMerge, type Manifest } from './kustomize.js';

const deploy = join(process.cwd(), 'deploy');
const CLUSTER_APPS = ['content', 'fanout', 'gateway', 'graph', 'timeline'];

/** Every kind the overlays hold, each checked against its schema (KEDA's from its CRD). */
const models: Record<string, new (data: never) => { validate(): void }> = {
  Namespace,
  ConfigMap,
  Service,
  ServiceAccount,
  PersistentVolumeClaim,
  Deployment,
  StatefulSet,
  Job,
  PodDisruptionBudget,
  HorizontalPodAutoscaler,
  ScaledObject,
};

const builds = {
  standalone: kustomizeBuild(join(deploy, 'overlays', 'standalone')),
  cluster: kustomizeBuild(join(deploy, 'overlays', 'cluster')),
  'cluster with kurrentdb': kustomizeBuild(join(deploy, 'overlays', 'cluster'), ['../../components/kurrentdb']),
};

const ofKind = <T>(manifests: Manifest[], kind: string) => manifests.filter((m) => m.kind === kind) as unknown as T[];
const named = <T>(manifests: Manifest[], kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name) as unknown as T;
const envOf = (manifests: Manifest[]) => named<ConfigMap>(manifests, 'ConfigMap', 'feedmill-env').data!;
const podsOf = (manifests: Manifest[]) => [...ofKind<Deployment>(manifests, 'Deployment'), ...ofKind<StatefulSet>(manifests, 'StatefulSet')];

describe.each(Object.entries(builds))('deploy/overlays: %s', (_name, manifests) => {
  it('holds only objects that pass their schemas, in the feedmill namespace', () => {
    expect(manifests.length).toBeGreaterThan(5);
    for (const manifest of manifests) {
      const Model = models[manifest.kind];
      expect({ kind: manifest.kind, known: Model !== undefined }).toEqual({ kind: manifest.kind, known: true });
      expect(() => new Model!(manifest as never).validate()).not.toThrow();
      if (manifest.kind !== 'Namespace') expect(manifest.metadata.namespace).toBe('feedmill');
      expect(manifest.metadata.labels?.['app.kubernetes.io/part-of']).toBe('feedmill');
    }
  });

  it('runs every pod non-root, on a read-only root filesystem, with requests, limits and probes', () => {
    for (const workload of podsOf(manifests)) {
      const pod = workload.spec!.template.spec!;
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const container of pod.containers) {
        const where = `${workload.metadata!.name}/${container.name}`;
        expect({ where, readOnly: container.securityContext?.readOnlyRootFilesystem, escalation: container.securityContext?.allowPrivilegeEscalation }).toEqual({ where, readOnly: true, escalation: false });
        expect({ where, requests: container.resources?.requests !== undefined, memoryLimit: container.resources?.limits?.['memory'] !== undefined }).toEqual({ where, requests: true, memoryLimit: true });
        expect({ where, readiness: container.readinessProbe !== undefined, liveness: container.livenessProbe !== undefined }).toEqual({ where, readiness: true, liveness: true });
      }
    }
  });

  it('gives every workload a disruption budget that selects its pods', () => {
    const budgets = ofKind<PodDisruptionBudget>(manifests, 'PodDisruptionBudget');
    for (const workload of podsOf(manifests)) {
      const selector = workload.spec!.selector.matchLabels!;
      expect({ workload: workload.metadata!.name, budget: budgets.some((b) => JSON.stringify(b.spec!.selector!.matchLabels) === JSON.stringify(selector)) }).toEqual({ workload: workload.metadata!.name, budget: true });
    }
  });

  it('configures only variables feedmill reads, values it accepts, and a feed config it accepts', () => {
    const env = envOf(manifests);
    for (const key of Object.keys(env)) expect(runtimeConfigSchemaKeys).toContain(key);
    expect(feedConfigSchema.safeParse(JSON.parse(named<ConfigMap>(manifests, 'ConfigMap', 'feedmill-feeds').data!['feeds.json']!)).success).toBe(true);
    for (const workload of ofKind<Deployment>(manifests, 'Deployment')) {
      for (const container of workload.spec!.template.spec!.containers) {
        expect(container.envFrom).toContainEqual({ configMapRef: { name: 'feedmill-env' } });
        expect(container.image).toBe('feedmill:0.1.0');
      }
    }
  });
});

describe('deploy/overlays/standalone', () => {
  const manifests = builds.standalone;

  it('runs one process on a file log on a claimed volume, replaced rather than doubled', () => {
    const [standalone, ...others] = ofKind<Deployment>(manifests, 'Deployment');
    expect(others).toEqual([]);
    expect(standalone!.spec!.replicas).toBe(1);
    expect(standalone!.spec!.strategy?.type).toBe('Recreate');
    const pod = standalone!.spec!.template.spec!;
    expect(pod.containers[0]!.command).toEqual(['node', 'apps/standalone/dist/main.js']);
    const env = envOf(manifests);
    expect(env).toMatchObject({ LOG: 'file', FEEDMILL_DATA_DIR: '/data' });
    const claim = pod.volumes!.find((v) => v.persistentVolumeClaim)!;
    expect(named<PersistentVolumeClaim>(manifests, 'PersistentVolumeClaim', claim.persistentVolumeClaim!.claimName)).toBeDefined();
    expect(pod.containers[0]!.volumeMounts).toContainEqual({ name: claim.name, mountPath: '/data' });
  });
});

describe('deploy/overlays/cluster', () => {
  const manifests = builds.cluster;
  const deployments = new Map(ofKind<Deployment>(manifests, 'Deployment').map((d) => [d.metadata!.name!, d]));
  const container = (app: string): IContainer => deployments.get(app)!.spec!.template.spec!.containers[0]!;

  it('runs the five apps from the one image, each with its command', () => {
    expect([...deployments.keys()].sort()).toEqual(CLUSTER_APPS);
    for (const app of CLUSTER_APPS) expect(container(app).command).toEqual(['node', `apps/${app}/dist/main.js`]);
  });

  it('probes every app, the gateway too, on its status port, the one STATUS_PORT opens', () => {
    const env = envOf(manifests);
    for (const app of CLUSTER_APPS) {
      const port = container(app).ports!.find((p) => p.name === 'status')!;
      expect(port.containerPort).toBe(Number(env['STATUS_PORT']));
      expect(container(app).readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'status' });
      expect(container(app).livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'status' });
    }
  });

  it('keeps the log on three JetStream servers that fsync every write, the stream in three copies', () => {
    const nats = named<StatefulSet>(manifests, 'StatefulSet', 'nats');
    expect(nats.spec!.replicas).toBe(3);
    const conf = named<ConfigMap>(manifests, 'ConfigMap', 'nats-config').data!['nats.conf']!;
    expect(conf).toMatch(/jetstream \{[^}]*sync_interval: always/);
    expect(conf.match(/nats:\/\/nats-\d\.nats-cluster:6222/g)).toHaveLength(3);
    expect(nats.spec!.serviceName).toBe('nats-cluster');
    expect(envOf(manifests)).toMatchObject({ JETSTREAM_REPLICAS: '3', NATS_URL: 'nats://nats:4222' });
    // Unset, a service's log is JetStream; set here, the kurrentdb component could not change it.
    expect(envOf(manifests)['LOG']).toBeUndefined();
  });

  it('keeps the projections in a three-member MongoDB replica set that the stores reach by its members', () => {
    const mongodb = named<StatefulSet>(manifests, 'StatefulSet', 'mongodb');
    expect(mongodb.spec!.replicas).toBe(3);
    expect(mongodb.spec!.template.spec!.containers[0]!.args).toEqual(expect.arrayContaining(['--replSet', 'rs0']));
    const env = envOf(manifests);
    expect(env['STORE']).toBe('mongodb');
    const [, hosts, query] = /^mongodb:\/\/([^/]+)\/\?(.*)$/.exec(env['MONGODB_URL']!)!;
    expect(new URLSearchParams(query).get('replicaSet')).toBe('rs0');
    expect(hosts!.split(',')).toEqual([0, 1, 2].map((i) => `mongodb-${i}.mongodb:27017`));
    const initiate = named<Job>(manifests, 'Job', 'mongodb-init').spec!.template.spec!.containers[0]!.command!.join(' ');
    for (const member of hosts!.split(',')) expect(initiate).toContain(`host: '${member}'`);
  });

  it('scales the gateway on CPU and fan-out on the chunk-job backlog of its JetStream consumer', () => {
    const hpa = named<HorizontalPodAutoscaler>(manifests, 'HorizontalPodAutoscaler', 'gateway');
    expect(hpa.spec!.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'gateway' });
    expect(hpa.spec!.metrics![0]!.resource!.name).toBe('cpu');
    expect(container('gateway').resources!.requests!['cpu']).toBeDefined();
    const scaled = named<ScaledObject>(manifests, 'ScaledObject', 'fanout');
    expect(scaled.spec!.scaleTargetRef.name).toBe('fanout');
    const trigger = scaled.spec!.triggers[0]!;
    expect(trigger.type).toBe('nats-jetstream');
    // The names the fan-out cluster gives its work queue (libs/fanout-cluster/src/jetstream/names.ts).
    expect(trigger.metadata).toMatchObject({ stream: `${envOf(manifests)['JETSTREAM_STREAM']}_FANOUT_JOBS`, consumer: 'workers' });
    expect(scaled.spec!.minReplicaCount).toBeGreaterThanOrEqual(2);
  });

  it('rolls every app one pod at a time without dropping below its replicas', () => {
    for (const deployment of deployments.values()) expect(deployment.spec!.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
  });

  it('moves the log to KurrentDB with the component', () => {
    const withKurrent = builds['cluster with kurrentdb'];
    expect(envOf(withKurrent)).toMatchObject({ LOG: 'kurrentdb', KURRENTDB_URL: 'kurrentdb://kurrentdb:2113?tls=false' });
    expect(named<StatefulSet>(withKurrent, 'StatefulSet', 'kurrentdb')).toBeDefined();
    // NATS stays: the services still talk over it.
    expect(named<StatefulSet>(withKurrent, 'StatefulSet', 'nats')).toBeDefined();
  });
});

describe('the kustomize build', () => {
  it('merges named list items by name and replaces other lists', () => {
    const target = { spec: { containers: [{ name: 'a', image: 'x', args: ['1'] }, { name: 'b', image: 'y' }] } };
    const patch = { spec: { containers: [{ name: 'a', args: ['2'] }, { name: 'c', image: 'z' }] } };
    expect(strategicMerge(target, patch)).toEqual({
      spec: { containers: [{ name: 'a', image: 'x', args: ['2'] }, { name: 'b', image: 'y' }, { name: 'c', image: 'z' }] },
    });
  });

  it('refuses a kustomization field it does not render, rather than ignore it', () => {
    expect(() => kustomizeBuild(join(deploy, 'test', 'fixtures', 'unsupported'))).toThrow(/replicas is not rendered/);
  });
});

import { readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** A Kubernetes object as a kustomization reads and writes it. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

interface Kustomization {
  kind?: 'Kustomization' | 'Component';
  namespace?: string;
  labels?: Array<{ pairs: Record<string, string> }>;
  resources?: string[];
  components?: string[];
  patches?: Array<{ path: string }>;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  configMapGenerator?: ConfigMapGenerator[];
}

/** A ConfigMap made of files; only with a fixed name, since this build computes no content hash. */
interface ConfigMapGenerator {
  name: string;
  files: string[];
  options: { disableNameSuffixHash: true; labels?: Record<string, string> };
}

/** Fields of a kustomization this renderer does not apply: a build that used one would be wrong. */
const SUPPORTED = new Set(['apiVersion', 'kind', 'namespace', 'labels', 'resources', 'components', 'patches', 'images', 'configMapGenerator']);

type PodSpecHolder = { spec?: { template?: { spec?: { containers?: Array<{ image: string }>; initContainers?: Array<{ image: string }> } } } };

function readYaml(path: string): unknown[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]!.message}`);
    return doc.toJS() as unknown;
  });
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNamedList = (value: unknown[]): value is Array<{ name: string }> => value.every((item) => isRecord(item) && typeof item['name'] === 'string');

/**
 * A strategic merge patch as kustomize applies it to the lists feedmill's manifests patch:
 * maps merge key by key, lists of named items (containers, env, ports, volumes) merge item by
 * name, other lists are replaced.
 */
export function strategicMerge(target: unknown, patch: unknown): unknown {
  if (isRecord(target) && isRecord(patch)) {
    const merged: Record<string, unknown> = { ...target };
    for (const [key, value] of Object.entries(patch)) merged[key] = key in target ? strategicMerge(target[key], value) : value;
    return merged;
  }
  if (Array.isArray(target) && Array.isArray(patch) && isNamedList(target) && isNamedList(patch)) {
    const merged: unknown[] = target.map((item) => {
      const over = patch.find((p) => p.name === item.name);
      return over ? strategicMerge(item, over) : item;
    });
    for (const item of patch) if (!target.some((t) => t.name === item.name)) merged.push(item);
    return merged;
  }
  return patch;
}

const idOf = (m: Manifest) => `${m.kind}/${m.metadata.name}`;

/**
 * What `kustomize build <dir>` produces for the features feedmill's kustomizations use:
 * resources (files and directories), components, strategic-merge patches by path, namespace,
 * labels (on metadata, not selectors), image tags and ConfigMaps generated from files (with
 * `disableNameSuffixHash`). Computed here because no kustomize
 * binary runs in CI; a kustomization with any other field fails the build.
 */
export function kustomizeBuild(dir: string, extraComponents: string[] = []): Manifest[] {
  const file = join(dir, 'kustomization.yaml');
  const kustomization = readYaml(file)[0] as Kustomization;
  for (const key of Object.keys(kustomization)) if (!SUPPORTED.has(key)) throw new Error(`${file}: ${key} is not rendered by this build`);
  let manifests: Manifest[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = resolve(dir, resource);
    manifests.push(...(statSync(path).isDirectory() ? kustomizeBuild(path) : (readYaml(path) as Manifest[])));
  }
  manifests.push(...(kustomization.configMapGenerator ?? []).map((generator) => generatedConfigMap(dir, file, generator)));
  for (const component of [...(kustomization.components ?? []), ...extraComponents]) {
    manifests = applyComponent(manifests, resolve(dir, component));
  }
  manifests = applyPatches(manifests, dir, kustomization.patches ?? []);
  const seen = new Set<string>();
  for (const manifest of manifests) {
    if (seen.has(idOf(manifest))) throw new Error(`${file}: ${idOf(manifest)} is defined twice`);
    seen.add(idOf(manifest));
  }
  return manifests.map((manifest) => transform(manifest, kustomization));
}

/** A generator's ConfigMap: each file under its base name, as kustomize loads files (only from within the kustomization's directory). */
function generatedConfigMap(dir: string, file: string, generator: ConfigMapGenerator): Manifest {
  if (generator.options?.disableNameSuffixHash !== true) throw new Error(`${file}: configMapGenerator ${generator.name} must set options.disableNameSuffixHash (this build adds no hash)`);
  const data: Record<string, string> = {};
  for (const path of generator.files) {
    const full = resolve(dir, path);
    if (relative(dir, full).startsWith('..')) throw new Error(`${file}: ${path} is outside the kustomization's directory, which kustomize refuses`);
    data[basename(path)] = readFileSync(full, 'utf8');
  }
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: generator.name, ...(generator.options.labels && { labels: { ...generator.options.labels } }) }, data };
}

function applyComponent(manifests: Manifest[], dir: string): Manifest[] {
  const kustomization = readYaml(join(dir, 'kustomization.yaml'))[0] as Kustomization;
  if (kustomization.kind !== 'Component') throw new Error(`${dir} is not a kustomize Component`);
  const added = (kustomization.resources ?? []).flatMap((resource) => readYaml(resolve(dir, resource)) as Manifest[]);
  return applyPatches([...manifests, ...added], dir, kustomization.patches ?? []);
}

function applyPatches(manifests: Manifest[], dir: string, patches: Array<{ path: string }>): Manifest[] {
  let patched = manifests;
  for (const { path } of patches) {
    for (const patch of readYaml(resolve(dir, path)) as Manifest[]) {
      const at = patched.findIndex((m) => idOf(m) === idOf(patch));
      if (at < 0) throw new Error(`${join(dir, path)}: no ${idOf(patch)} to patch`);
      patched = patched.map((m, i) => (i === at ? (strategicMerge(m, patch) as Manifest) : m));
    }
  }
  return patched;
}

function transform(manifest: Manifest, kustomization: Kustomization): Manifest {
  const out = structuredClone(manifest);
  if (kustomization.namespace && out.kind !== 'Namespace') out.metadata.namespace = kustomization.namespace;
  const labels = Object.assign({}, ...(kustomization.labels ?? []).map((l) => l.pairs)) as Record<string, string>;
  if (Object.keys(labels).length > 0) out.metadata.labels = { ...out.metadata.labels, ...labels };
  const pod = (out as PodSpecHolder).spec?.template?.spec;
  for (const container of [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])]) {
    const image = kustomization.images?.find((i) => i.name === container.image.split(':')[0]);
    if (image) container.image = `${image.newName ?? image.name}:${image.newTag ?? 'latest'}`;
  }
  return out;
}

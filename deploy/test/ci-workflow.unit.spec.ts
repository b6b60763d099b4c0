import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateWorkflow } from '@action-validator/core';
import { parse } from 'yaml';

/**
 * `.github/workflows/ci.yml` cannot run here: it is checked offline instead, against
 * GitHub's workflow schema (action-validator carries it), and against this repository: every
 * `npm run` it calls is a script of package.json, and the jobs run what the project promises
 * (`npm test` on Node 22 and 24, the MongoDB and KurrentDB contracts with their URLs set, the
 * HTTP scenarios with `STORE=mongodb` and with `LOG=kurrentdb`).
 */
const root = process.cwd();
const text = readFileSync(join(root, '.github', 'workflows', 'ci.yml'), 'utf8');
const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

interface Step {
  run?: string;
  uses?: string;
  env?: Record<string, string>;
}
interface Job {
  env?: Record<string, string>;
  strategy?: { matrix?: { node?: number[] } };
  services?: Record<string, { image: string; env?: Record<string, string> }>;
  steps: Step[];
}
const workflow = parse(text) as { jobs: Record<string, Job> };
const jobs = Object.values(workflow.jobs);

/** The npm scripts a shell line runs (`npm test` is `test`). */
const npmScriptsIn = (run: string) => [...run.matchAll(/\bnpm (?:run (\S+)|(test)\b)/g)].map((match) => match[1] ?? match[2]!);

/** The steps of every job that run `script`, each with the environment it runs in. */
const runsOf = (script: string) =>
  Object.entries(workflow.jobs).flatMap(([name, job]) =>
    job.steps.filter((step) => step.run !== undefined && npmScriptsIn(step.run).includes(script)).map((step) => ({ name, job, env: { ...job.env, ...step.env } })),
  );

describe('.github/workflows/ci.yml', () => {
  it("passes GitHub's workflow schema", () => {
    expect(validateWorkflow(text).errors).toEqual([]);
    // The validator does refuse a broken workflow: a job with nowhere to run.
    expect(validateWorkflow('on: push\njobs:\n  broken:\n    steps:\n      - run: echo\n').errors.length).toBeGreaterThan(0);
  });

  it('calls only scripts that package.json has', () => {
    const called = jobs.flatMap((job) => job.steps.flatMap((step) => (step.run ? npmScriptsIn(step.run) : [])));
    expect(called.length).toBeGreaterThan(3);
    for (const script of called) expect({ script, exists: script in scripts }).toEqual({ script, exists: true });
  });

  it('runs npm test on Node 22 and 24', () => {
    const [test] = runsOf('test');
    expect(test!.job.strategy?.matrix?.node).toEqual([22, 24]);
    expect(test!.job.steps.some((step) => step.uses?.startsWith('actions/setup-node') && (step as { with?: Record<string, string> }).with?.['node-version'] === '${{ matrix.node }}')).toBe(true);
  });

  it('runs the contract suites with MONGODB_URL and KURRENTDB_URL set, against mongo:8 as a replica set and KurrentDB', () => {
    const contracts = runsOf('test:contracts');
    expect(contracts.map(({ env }) => env['MONGODB_URL'] ?? env['KURRENTDB_URL'])).toEqual(['mongodb://127.0.0.1:27017/?replicaSet=rs0', 'kurrentdb://127.0.0.1:2113?tls=false']);
    expect(text).toMatch(/docker run .*mongo:8 --replSet rs0/);
    const kurrent = workflow.jobs['kurrentdb']!.services!['kurrentdb']!;
    expect(kurrent.image).toMatch(/^kurrentplatform\/kurrentdb:/);
    expect(kurrent.env?.['KURRENTDB_INSECURE']).toBe('true');
    expect(scripts['test:contracts']).toContain('libs/stores/src/mongodb/mongo-stores');
    expect(scripts['test:contracts']).toContain('libs/event-log/src/kurrentdb');
  });

  it('runs the HTTP scenarios with STORE=mongodb and with LOG=kurrentdb, each next to its server', () => {
    const scenarios = runsOf('test:scenarios');
    expect(scenarios.map(({ name, env }) => ({ name, STORE: env['STORE'], LOG: env['LOG'], url: env['MONGODB_URL'] ?? env['KURRENTDB_URL'] }))).toEqual([
      { name: 'mongodb', STORE: 'mongodb', LOG: undefined, url: expect.stringMatching(/^mongodb:/) },
      { name: 'kurrentdb', STORE: undefined, LOG: 'kurrentdb', url: expect.stringMatching(/^kurrentdb:/) },
    ]);
    expect(scripts['test:scenarios']).toContain('apps/standalone/src/standalone.e2e');
    // The e2e tiers start the built apps: each job builds before.
    for (const { job } of scenarios) expect(job.steps.findIndex((step) => step.run === 'npm run build')).toBeGreaterThan(-1);
  });
});

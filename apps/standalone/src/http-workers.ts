import cluster, { type Worker } from 'node:cluster';
import { once } from 'node:events';
import { Logger } from '@nestjs/common';
import type { RuntimeConfig } from '@feedmill/config';
import { serveLink } from '@feedmill/transport';
import { createHttpWorkerApp, createServicesApp } from './standalone.js';

const logger = new Logger('feedmill');

/** How long workers get to finish the requests they hold when the standalone stops. */
const WORKER_STOP_MS = 10_000;

/**
 * The standalone on more than one core (`HTTP_WORKERS` > 0). This process, the cluster's
 * primary, holds the log, the stores and the services; forked workers answer HTTP on the
 * shared port and call the services over their IPC channel. HTTP parsing, validation and
 * writing, most of a read's cost, run beside the services rather than in their event loop,
 * which is left to the log, the stores and fan-out. Node's cluster hands each new
 * connection to the next worker.
 *
 * Workers start at once and answer `503 unavailable` (and `/readyz` 503) until the services
 * have caught up with the log; one that dies is replaced. On SIGTERM or SIGINT the workers stop taking
 * connections and finish what they hold first, then the services stop and write their
 * snapshots.
 */
export async function runServicesPrimary(config: RuntimeConfig): Promise<void> {
  const { app, client } = await createServicesApp(config);
  cluster.setupPrimary({ serialization: 'advanced' });
  const workers = new Set<Worker>();
  let stopping = false;
  let servicesReady = false;
  const fork = (): Worker => {
    const worker = cluster.fork();
    workers.add(worker);
    serveLink(worker, client, () => servicesReady);
    worker.on('exit', (code, signal) => {
      workers.delete(worker);
      if (stopping) return;
      logger.warn(`HTTP worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
      fork();
    });
    return worker;
  };
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const exited = [...workers].map((worker) => once(worker, 'exit'));
    for (const worker of workers) worker.disconnect();
    const late = setTimeout(() => workers.forEach((worker) => worker.process.kill('SIGKILL')), WORKER_STOP_MS);
    await Promise.all(exited);
    clearTimeout(late);
    await app.close();
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void stop());
  // Workers start while the services catch up with the log; until then they answer 503.
  const listening = Promise.all(Array.from({ length: config.HTTP_WORKERS }, () => once(fork(), 'listening')));
  await app.listen();
  servicesReady = true;
  await listening;
  logger.log(`standalone on http://127.0.0.1:${config.PORT}, ${config.HTTP_WORKERS} HTTP workers (data in ${config.FEEDMILL_DATA_DIR})`);
}

/**
 * A worker of {@link runServicesPrimary}: the gateway, listening on the shared port. It
 * leaves when the primary disconnects it (or exits, as cluster workers do, when the primary
 * is gone); signals are the primary's to handle.
 */
export async function runHttpWorker(config: RuntimeConfig): Promise<void> {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => undefined);
  const app = await createHttpWorkerApp(config);
  await app.listen({ port: config.PORT, host: '0.0.0.0' });
}

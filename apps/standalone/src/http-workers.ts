import cluster, { type Worker } from 'node:cluster';
import { once } from 'node:events';
import { Logger } from '@nestjs/common';
import type { RuntimeConfig } from '@feedmill/config';
import { PrimaryMetrics, WorkerMetrics } from '@feedmill/observability';
import { reportServicesOnScrape, servicesStatus, StatusServer } from '@feedmill/runtime';
import { serveLink, serveRealtimeLink } from '@feedmill/transport';
import { createHttpWorkerApp, createServicesApp } from './standalone.js';

const logger = new Logger('feedmill');

/** A worker's `process`, its channel to the primary. */
type MetricsLinkOfWorker = ConstructorParameters<typeof WorkerMetrics>[0];

/** How long workers get to finish the requests they hold when the standalone stops. */
const WORKER_STOP_MS = 10_000;

/**
 * The standalone with `HTTP_WORKERS` > 0. This process, the cluster's primary, holds the
 * log, the stores and the services; forked workers answer HTTP on the shared port and call
 * the services over their IPC channel, so that HTTP parsing, validation and writing run
 * beside the services rather than in their event loop. Node's cluster hands each new
 * connection to the next worker.
 *
 * Workers start at once and answer `503 unavailable` (and `/readyz` 503) until the services
 * have caught up with the log. One that dies after it listened, or is killed by a signal
 * (the OOM killer, an operator) at any time, is replaced; one that exits on its own before
 * it listened (a port taken, say) stops the standalone, since its replacement would too. On
 * SIGTERM or SIGINT the workers stop taking requests and finish what they hold first, then
 * the services stop and write their snapshots.
 *
 * `/metrics`, on the status port (`STATUS_PORT`) only, never on the public HTTP port,
 * answers this process's metrics (`worker="services"`) and every worker's (`worker="http-<n>"`),
 * which this process gathers over their IPC channels.
 */
export async function runServicesPrimary(config: RuntimeConfig): Promise<void> {
  const metrics = new PrimaryMetrics('services');
  const started: { ready: boolean } = { ready: false };
  const statusServer = config.STATUS_PORT === undefined ? undefined : await StatusServer.listen(config.STATUS_PORT, async () => (started.ready ? servicesStatus(client) : { service: 'standalone', ready: false, position: -1 }), metrics);
  const { app, client, realtimeBus, replicas } = await createServicesApp(config);
  cluster.setupPrimary({ serialization: 'advanced' });
  const workers = new Set<Worker>();
  let stopping = false;
  let servicesReady = false;

  const stop = async (exitCode: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const exited = [...workers].map((worker) => once(worker, 'exit'));
    for (const worker of workers) worker.process.kill('SIGTERM');
    const late = setTimeout(() => workers.forEach((worker) => worker.process.kill('SIGKILL')), WORKER_STOP_MS);
    await Promise.all(exited);
    clearTimeout(late);
    await app.close();
    await statusServer?.close();
    process.exit(exitCode);
  };

  const fork = (): Promise<unknown> => {
    const worker = cluster.fork();
    workers.add(worker);
    serveLink(worker, client, () => servicesReady);
    const stopStreaming = serveRealtimeLink(worker, realtimeBus);
    const forgetMetrics = metrics.serve(worker);
    const forgetCopy = replicas?.serve(worker);
    let listened = false;
    // Answers owed to a worker that died are sent to a closed channel: dropped, as its requests were.
    worker.on('error', (error) => logger.warn(`HTTP worker ${worker.process.pid}: ${error.message}`));
    worker.on('exit', (code, signal) => {
      workers.delete(worker);
      stopStreaming();
      forgetMetrics();
      forgetCopy?.();
      if (stopping) return;
      if (!listened && signal === null) {
        logger.error(`HTTP worker ${worker.process.pid} exited (${signal ?? code}) before it listened on port ${config.PORT}; stopping`);
        void stop(1);
        return;
      }
      logger.warn(`HTTP worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
      void fork();
    });
    return once(worker, 'listening').then(() => (listened = true));
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void stop(0));
  const listening = Promise.all(Array.from({ length: config.HTTP_WORKERS }, fork));
  await app.listen();
  servicesReady = true;
  started.ready = true;
  reportServicesOnScrape(client);
  await listening;
  logger.log(`standalone on http://127.0.0.1:${config.PORT}, ${config.HTTP_WORKERS} HTTP workers${statusServer ? `, status on port ${statusServer.port}` : ''} (data in ${config.FEEDMILL_DATA_DIR})`);
}

/**
 * A worker of {@link runServicesPrimary}: the gateway, listening on the shared port. On
 * SIGTERM or SIGINT it closes: new requests get 503 with `Connection: close`, idle
 * connections are closed, and those in flight finish over the still-open IPC channel. It
 * also leaves, as cluster workers do, when the primary is gone.
 */
export async function runHttpWorker(config: RuntimeConfig): Promise<void> {
  // Its signals close it through Nest's shutdown hooks (see createHttpApp).
  new WorkerMetrics(process as unknown as MetricsLinkOfWorker, `http-${cluster.worker!.id}`);
  const app = await createHttpWorkerApp(config);
  await app.listen({ port: config.PORT, host: '0.0.0.0' });
}

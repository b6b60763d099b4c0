import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadRuntimeConfig } from '@feedmill/config';
import { connectFanoutCluster } from '@feedmill/fanout-cluster';
import { configureLogging, runMain, runNatsService } from '@feedmill/runtime';
import { FanoutModule, FanoutService } from '@feedmill/fanout-service';

runMain(async () => {
  const config = loadRuntimeConfig();
  configureLogging(config.LOG_LEVEL, 'fanout', config.REQUEST_IDS);
  const logger = new Logger('fanout-cluster');
  // Any number of these processes may run: one plans at a time, all apply chunk jobs.
  const cluster = await connectFanoutCluster({
    servers: config.NATS_URL,
    logStream: config.JETSTREAM_STREAM,
    jobLeaseMs: config.FANOUT_JOB_LEASE_MS,
    plannerLeaseMs: config.FANOUT_PLANNER_LEASE_MS,
    warn: (message) => logger.warn(message),
  });
  const feature = FanoutModule.inCluster(cluster, { minReaders: config.FANOUT_JOB_MIN_READERS, stallMs: config.FANOUT_JOB_STALL_MS });
  await runNatsService({ name: 'fanout', feature, usesLog: true, callsServices: true, status: FanoutService });
});

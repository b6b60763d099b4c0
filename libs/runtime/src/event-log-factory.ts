import { Logger } from '@nestjs/common';
import { FileEventLog, JetStreamEventLog, KurrentEventLog, type EventLog } from '@feedmill/event-log';
import type { RuntimeConfig } from '@feedmill/config';
import { metrics } from '@feedmill/observability';
import { MeasuredEventLog } from './measured-event-log.js';

/** Opens the configured log (`LOG`), or `fallback` when none is configured, its appends measured for `/metrics`. */
export async function openEventLog(config: RuntimeConfig, fallback: 'file' | 'jetstream'): Promise<EventLog> {
  const kind = config.LOG ?? fallback;
  return new MeasuredEventLog(await openLogOfKind(config, kind), kind);
}

async function openLogOfKind(config: RuntimeConfig, kind: 'file' | 'jetstream' | 'kurrentdb'): Promise<EventLog> {
  const logger = new Logger('event-log');
  if (kind === 'kurrentdb') {
    logger.log('KurrentDB log');
    return KurrentEventLog.connect({ connectionString: config.KURRENTDB_URL!, namespace: config.KURRENTDB_NAMESPACE });
  }
  if (kind === 'jetstream') {
    logger.log(`JetStream log on ${config.NATS_URL}, stream ${config.JETSTREAM_STREAM}`);
    return JetStreamEventLog.connect({ servers: config.NATS_URL, streamName: config.JETSTREAM_STREAM, replicas: config.JETSTREAM_REPLICAS });
  }
  logger.log(`file log in ${config.FEEDMILL_DATA_DIR}`);
  return FileEventLog.open({
    dir: config.FEEDMILL_DATA_DIR,
    // How appends share the file's fsyncs: the batch sizes behind the append latency.
    onGroupCommit: ({ appends, seconds }) => {
      metrics.fileLogCommitAppends.observe(appends);
      metrics.fileLogCommitDuration.observe(seconds);
    },
    onTailRepaired: ({ keptBytes, cutBytes }) =>
      logger.warn(`cut a torn record at the end of the log: kept ${keptBytes} bytes, cut ${cutBytes}`),
  });
}

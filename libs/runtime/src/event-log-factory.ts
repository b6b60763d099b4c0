import { Logger } from '@nestjs/common';
import { FileEventLog, FileFeedKeyStore, JetStreamEventLog, JetStreamFeedKeyStore, KurrentEventLog, sealedWith, type EventLog, type SealedEventLog } from '@feedmill/event-log';
import type { RuntimeConfig } from '@feedmill/config';
import { metrics } from '@feedmill/observability';
import { MeasuredEventLog } from './measured-event-log.js';

/**
 * Opens the configured log (`LOG`), or `fallback` when none is configured, with activities'
 * content sealed by their feeds' keys: keys in the data directory beside a file log (and a
 * standalone's KurrentDB log), in a JetStream KV bucket (`<JETSTREAM_STREAM>_feed_keys`)
 * beside the JetStream log and a cluster's KurrentDB log.
 */
export async function openEventLog(config: RuntimeConfig, fallback: 'file' | 'jetstream'): Promise<SealedEventLog> {
  const kind = config.LOG ?? fallback;
  // A standalone on KurrentDB may run without NATS: its keys stay in its data directory.
  const keysInDataDir = kind === 'file' || (kind === 'kurrentdb' && fallback === 'file');
  return sealedWith(new MeasuredEventLog(await openPlainEventLog(config, kind), kind), () =>
    keysInDataDir
      ? FileFeedKeyStore.open(config.FEEDMILL_DATA_DIR)
      : JetStreamFeedKeyStore.connect({ servers: config.NATS_URL, bucket: `${config.JETSTREAM_STREAM}_feed_keys`, replicas: config.JETSTREAM_REPLICAS }),
  );
}

async function openPlainEventLog(config: RuntimeConfig, kind: 'file' | 'jetstream' | 'kurrentdb'): Promise<EventLog> {
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

import { FileEventLog, type FileEventLogOptions } from '../file/file-event-log.js';
import { JetStreamEventLog, type JetStreamEventLogOptions } from '../jetstream/jetstream-event-log.js';
import type { EventLog } from '../event-log.port.js';
import { FileFeedKeyStore } from './file-feed-keys.js';
import { JetStreamFeedKeyStore } from './jetstream-feed-keys.js';
import { SealedEventLog } from './sealed-event-log.js';

/** The file log of a data directory with the feeds' keys beside it: what the standalone writes and reads. */
export async function openSealedFileLog(options: FileEventLogOptions): Promise<SealedEventLog> {
  return sealedWith(await FileEventLog.open(options), () => FileFeedKeyStore.open(options.dir));
}

/** A JetStream log with its feeds' keys in the bucket `<stream>_feed_keys`: what the cluster writes and reads. */
export async function connectSealedJetStreamLog(options: JetStreamEventLogOptions): Promise<SealedEventLog> {
  const streamName = options.streamName ?? 'FEEDMILL';
  return sealedWith(await JetStreamEventLog.connect(options), () =>
    JetStreamFeedKeyStore.connect({ servers: options.servers, bucket: `${streamName}_feed_keys`, replicas: options.replicas }),
  );
}

/** `log` sealed with the key store `openKeys` opens; the log is closed if the key store does not open. */
export async function sealedWith(log: EventLog, openKeys: () => Promise<FileFeedKeyStore | JetStreamFeedKeyStore>): Promise<SealedEventLog> {
  try {
    return new SealedEventLog(log, await openKeys());
  } catch (error) {
    await log.close();
    throw error;
  }
}

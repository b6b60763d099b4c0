export { EVENT_LOG } from './event-log.port.js';
export type {
  EventLog,
  NewEvent,
  RecordedEvent,
  ExpectedVersion,
  AppendOptions,
  AppendResult,
  SubscribeOptions,
  Subscription,
} from './event-log.port.js';
export { WrongExpectedVersionError, EventLogClosedError, LogAppendRefusedError } from './errors.js';
export { FileEventLog } from './file/file-event-log.js';
export type { FileEventLogOptions } from './file/file-event-log.js';
export { DirectoryLockedError } from './file/directory-lock.js';
export { writeFully } from './file/write-fully.js';
export { JetStreamEventLog } from './jetstream/jetstream-event-log.js';
export { closeNats, connectNats, flushWithin } from './jetstream/nats-connection.js';
export { withTimeout } from './with-timeout.js';
export { InboxRequests, NoResponderError, RequestTimeoutError } from './jetstream/inbox-requests.js';
export { fitsIn, messageBytesOf, publishReply, REPLY_PART_HEADER } from './jetstream/reply-parts.js';
export type { Reply } from './jetstream/reply-parts.js';
export { KurrentEventLog } from './kurrentdb/kurrentdb-event-log.js';
export type { KurrentEventLogOptions } from './kurrentdb/kurrentdb-event-log.js';
export type { JetStreamEventLogOptions } from './jetstream/jetstream-event-log.js';
export { CorruptLogError, LogNotWritableError, LogWriteFailedError } from './file/file-log-errors.js';
export { SealedEventLog } from './sealing/sealed-event-log.js';
export type { ErasureListener } from './sealing/sealed-event-log.js';
export type { FeedKeyStore } from './sealing/feed-keys.port.js';
export { FileFeedKeyStore, FEED_KEYS_FILE, UnreadableKeyFileError } from './sealing/file-feed-keys.js';
export { JetStreamFeedKeyStore } from './sealing/jetstream-feed-keys.js';
export type { JetStreamFeedKeyStoreOptions } from './sealing/jetstream-feed-keys.js';
export { seal, open as openSealed, sealEventData, openEventData, sealedKeyRefs, newFeedKey, SealedContentError } from './sealing/sealed-content.js';
export type { FeedKey, FeedKeyRef } from './sealing/sealed-content.js';
export { openSealedFileLog, connectSealedJetStreamLog, sealedWith } from './sealing/open-sealed.js';

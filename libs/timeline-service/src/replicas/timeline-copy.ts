import { Logger } from '@nestjs/common';
import { FeedGroups } from '@feedmill/config';
import { subjects, type FeedConfig, type FeedId, type ReadTimelineRequest, type ReplyOf, type RequestOf, type Subject } from '@feedmill/contracts';
import type { EventLog } from '@feedmill/event-log';
import { memoryStores } from '@feedmill/runtime';
import { MemoryTimelineStore, type SnapshotState } from '@feedmill/stores';
import { writeHeldPage, type MessageLink, type PageSubject, type PartitionRoute, type ServiceClient, type WrittenPage } from '@feedmill/transport';
import { TimelineService } from '../timeline.service.js';
import { fromCopied, isReplicaMessage, ReaderLists, type CopiedRequest, type ReplicaMessage } from './replica-messages.js';

/**
 * Models whose reads a copy answers as the original would: those whose pages come from the
 * timeline (`ring`, the buckets) and `cache`, which the copy builds from the pull path (the
 * services, as of at least where the copy stands) at a reader's first read and keeps by
 * the batches it receives, as the original does. Not `pull`, whose every read is a pull
 * from the services anyway, nor `hybrid`, whose reads decide, in the store that counts
 * them, which edges are pushed.
 */
const COPIED_MODELS = new Set(['ring', 'time-buckets', 'size-buckets', 'cache']);

/** How long a copy that must start over waits before it asks again, so that a refusal that repeats does not make a snapshot after snapshot. */
const START_OVER_DELAY_MS = 1_000;

interface Copy {
  epoch: number;
  groups: FeedGroups;
  /** The lists of readers received since the snapshot (see `CopiedDelivery`). */
  lists: ReaderLists;
  store: MemoryTimelineStore;
  /** Reads the copy as the timeline service reads its own store (hydration, hidden entries, access). */
  service: TimelineService;
}

/**
 * An HTTP worker's copy of the memory timelines of the process it calls (see
 * `TimelineReplicas`): it asks for them once, restores the snapshot it is sent, then applies
 * every batch of deliveries that process applied, in order, and says where it stands after
 * each message. Reads of `ring`, bucketed and `cache` timelines are answered from it;
 * anything else, and every read until the first snapshot is in, goes to the services.
 */
export class TimelineCopy {
  private readonly logger = new Logger('timeline-copy');
  private copy: Copy | undefined;
  /** Messages are taken one after another: a batch waits for the snapshot before it. */
  private taking: Promise<void> = Promise.resolve();

  /**
   * @param link the channel to the process holding the timelines.
   * @param client the services, for what a read asks beside the timeline (content for linked entries, graph for access).
   */
  constructor(
    private readonly link: MessageLink,
    private readonly client: ServiceClient,
  ) {
    link.on('message', (message) => {
      if (!isReplicaMessage(message)) return;
      this.taking = this.taking.then(() => this.take(message)).catch((error: unknown) => this.startOver(error));
    });
  }

  /** Asks for the timelines; reads go to the services until they are in. */
  join(): void {
    this.link.send({ replica: 'join' } satisfies ReplicaMessage);
  }

  /** Where the copy stands; undefined before its first snapshot. */
  async position(): Promise<number | undefined> {
    return this.copy?.store.position();
  }

  /** Whether a read of `feed`'s timeline is answered here. */
  answers(feed: FeedId): boolean {
    return this.copy !== undefined && COPIED_MODELS.has(this.copy.groups.timelinePolicyOf(feed).model);
  }

  read(request: ReadTimelineRequest): Promise<ReplyOf<typeof subjects.timeline.read>> {
    return this.copy!.service.read(request);
  }

  private async take(message: ReplicaMessage): Promise<void> {
    if (message.replica === 'snapshot') await this.restore(message.state, message.config, message.epoch);
    else if (message.replica === 'deliver') await this.apply(message.requests);
  }

  /** Takes a snapshot under the config the timelines were built with, which may differ from the file's by now. */
  private async restore(state: SnapshotState, config: FeedConfig, epoch: number): Promise<void> {
    const groups = new FeedGroups(config);
    const store = new MemoryTimelineStore((reader) => groups.timelinePolicyOf(reader), undefined, groups.fingerprint);
    store.restoreSnapshot(state);
    // The service reads the copy as the original's reads its store, and reports it in this
    // worker's `/metrics` (labelled with the worker: its own memory). It is given no log:
    // the copy's batches go to the store itself, and a read asks nothing of the log.
    const service = new TimelineService(this.client, groups, null as unknown as EventLog, { ...memoryStores, timeline: async () => store }, () => config);
    await service.onModuleInit();
    const previous = this.copy;
    this.copy = { epoch, groups, lists: new ReaderLists(), store, service };
    await previous?.service.onModuleDestroy();
    this.applied(this.copy);
  }

  /**
   * A batch that starts before where the copy stands was in its snapshot already (see
   * `TimelineReplicas.copyTo`); one that starts after it means a batch was lost: the copy
   * starts over.
   */
  private async apply(requests: readonly CopiedRequest[]): Promise<void> {
    const copy = this.copy;
    if (!copy) return;
    for (const copied of requests) {
      const request = fromCopied(copied, copy.lists);
      // To the store itself: any refusal starts the copy over, where the original's service would retry reader by reader.
      const reply = await copy.store.deliver(request);
      if (!reply.applied && request.after > reply.position) throw new Error(`a batch from position ${request.after} came to a copy at ${reply.position}`);
    }
    this.applied(copy);
  }

  private applied(copy: Copy): void {
    void copy.store.position().then((position) => this.link.send({ replica: 'applied', position, epoch: copy.epoch } satisfies ReplicaMessage));
  }

  private startOver(error: unknown): void {
    this.logger.warn(`the copy of the timelines starts over in ${START_OVER_DELAY_MS} ms: ${error instanceof Error ? error.message : String(error)}`);
    const previous = this.copy;
    this.copy = undefined;
    void previous?.service.onModuleDestroy();
    setTimeout(() => this.join(), START_OVER_DELAY_MS).unref();
  }
}

/**
 * The services as an HTTP worker with a {@link TimelineCopy} calls them: timeline reads the
 * copy answers are answered here, without a call over the link; everything else goes to
 * `services`.
 */
export class CopyReadingClient implements ServiceClient {
  constructor(
    private readonly services: ServiceClient,
    private readonly copy: TimelineCopy,
  ) {}

  request<S extends Subject>(subject: S, payload: RequestOf<S>, route?: PartitionRoute): Promise<ReplyOf<S>> {
    if (this.answersHere(subject, payload, route)) return this.copy.read(payload as ReadTimelineRequest) as Promise<ReplyOf<S>>;
    return this.services.request(subject, payload, route);
  }

  async requestPage<S extends PageSubject>(subject: S, payload: RequestOf<S>, route?: PartitionRoute): Promise<WrittenPage> {
    if (this.answersHere(subject, payload, route)) return writeHeldPage(await this.copy.read(payload as ReadTimelineRequest));
    return this.services.requestPage(subject, payload, route);
  }

  close(): Promise<void> {
    return this.services.close();
  }

  private answersHere(subject: Subject, payload: unknown, route: PartitionRoute | undefined): boolean {
    return subject === subjects.timeline.read && route === undefined && this.copy.answers((payload as ReadTimelineRequest).feed);
  }
}

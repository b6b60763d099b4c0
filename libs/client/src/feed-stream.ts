import type { Activity, ActivityGroupItem } from '@feedmill/contracts';
import { FeedmillApiError } from './errors.js';
import { SseParser } from './sse-parser.js';
import type { ApiTransport } from './transport.js';

/** A notification feed's counts as of an event. */
export interface NotificationCounts {
  unseen?: number;
  unread?: number;
}

/**
 * A change to a feed's first page, as its stream tells it; `id` is what a resume starts after.
 * An aggregated (or notification) feed's page is groups: its `reset` holds `groups`, and its
 * changes are `group` events: take the group out wherever it is and put `group` at `rank`
 * (0 is the top), or take out the group `removed` names.
 */
export type FeedStreamEvent =
  | { id: string; type: 'added'; data: { activity: Activity; cursor: string } }
  | { id: string; type: 'updated'; data: { activity: Activity; cursor: string } }
  | { id: string; type: 'removed'; data: { id: string } }
  | { id: string; type: 'reset'; data: { items: Activity[]; newest: string | null } | ({ groups: ActivityGroupItem[] } & NotificationCounts) }
  | { id: string; type: 'group'; data: ({ group: ActivityGroupItem; rank: number } & NotificationCounts) | ({ removed: string } & NotificationCounts) };

export interface StreamOptions {
  /** Resume after this event (sent as `Last-Event-ID`); none starts with a `reset` holding the first page. */
  lastEventId?: string;
  /** Reconnect when the connection drops, resuming after the last event received. @defaultValue true */
  reconnect?: boolean;
  /** Wait before a reconnect, unless the server said otherwise (`retry`). @defaultValue 1,000 ms */
  retryMs?: number;
  /** Ends the stream when aborted. */
  signal?: AbortSignal;
}

const EVENT_TYPES = new Set(['added', 'updated', 'removed', 'reset', 'group']);

/**
 * A feed's realtime stream as an async iterator of typed events. A dropped connection (or
 * a server that went away) is reconnected after `retryMs`, resuming with `Last-Event-ID`:
 * the server then sends what was missed, or a `reset` when that is too old. An answer other
 * than 200 (a 401, a 404) ends the iteration with a {@link FeedmillApiError}; `close()` or
 * the signal ends it quietly.
 */
export class FeedStream implements AsyncIterableIterator<FeedStreamEvent> {
  private readonly abort = new AbortController();
  private readonly events: AsyncGenerator<FeedStreamEvent>;
  private lastId: string | undefined;
  /** Connections made so far: 1 until the first reconnect. */
  connections = 0;

  constructor(
    private readonly transport: ApiTransport,
    private readonly path: string,
    private readonly options: StreamOptions = {},
  ) {
    this.lastId = options.lastEventId;
    options.signal?.addEventListener('abort', () => this.abort.abort(), { once: true });
    this.events = this.run();
  }

  /** The id of the last event received: where a later stream may resume. */
  get lastEventId(): string | undefined {
    return this.lastId;
  }

  next(): Promise<IteratorResult<FeedStreamEvent>> {
    return this.events.next();
  }

  async return(): Promise<IteratorResult<FeedStreamEvent>> {
    this.close();
    return this.events.return(undefined);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Ends the stream and its connection. */
  close(): void {
    this.abort.abort();
  }

  private async *run(): AsyncGenerator<FeedStreamEvent> {
    const parser = new SseParser();
    while (!this.abort.signal.aborted) {
      let response: Response;
      try {
        response = await this.transport.open({
          method: 'GET',
          path: this.path,
          headers: { accept: 'text/event-stream', ...(this.lastId !== undefined && { 'last-event-id': this.lastId }) },
          signal: this.abort.signal,
        });
      } catch (error) {
        if (this.abort.signal.aborted) return;
        if (this.options.reconnect === false) throw error;
        await this.pause(parser.retryMs);
        continue;
      }
      if (response.status !== 200) {
        const text = await response.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Not the API's error shape: fromAnswer says so.
        }
        const error = FeedmillApiError.fromAnswer(response.status, body, response.headers.get('retry-after'));
        // A server that is not ready yet, or gone for a moment, is waited for; a refusal is final.
        if (response.status < 500 || this.options.reconnect === false) throw error;
        await this.pause(parser.retryMs);
        continue;
      }
      this.connections++;
      try {
        const decoder = new TextDecoder();
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
            if (!EVENT_TYPES.has(message.event)) continue;
            if (message.id !== undefined) this.lastId = message.id;
            yield { id: message.id ?? '', type: message.event, data: JSON.parse(message.data) } as FeedStreamEvent;
          }
        }
      } catch (error) {
        if (this.abort.signal.aborted) return;
        if (this.options.reconnect === false) throw error;
      }
      if (this.abort.signal.aborted || this.options.reconnect === false) return;
      await this.pause(parser.retryMs);
    }
  }

  private pause(serverRetryMs: number | undefined): Promise<void> {
    const ms = serverRetryMs ?? this.options.retryMs ?? 1_000;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.abort.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}


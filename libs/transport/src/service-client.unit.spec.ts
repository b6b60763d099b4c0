import { Controller, Logger, Module, UsePipes, type PipeTransform } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { FeedmillError, subjects } from '@feedmill/contracts';
import { InProcessServer } from './in-process.server.js';
import { InProcessSubjectServer } from './subject-server.js';
import { parseRequest } from './message-handlers.js';
import { InProcessServiceClient, RemoteServiceClient, type ServiceClient } from './service-client.js';

const activity = { id: 'a1', feed: 'user:bob', actor: 'bob', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z' } as const;

/** A client to another process whose every request comes back as `reply` (or fails with `error`). */
function remoteAnswering(reply: { value?: unknown; error?: unknown }): RemoteServiceClient {
  const send = () => ('error' in reply ? Promise.reject(reply.error) : Promise.resolve(reply.value));
  return new RemoteServiceClient({ send, close: async () => undefined });
}

beforeAll(() => Logger.overrideLogger(false));
afterAll(() => Logger.overrideLogger(['log', 'error', 'warn']));

describe('service clients', () => {
  it('return a reply of the subject’s shape as it came', async () => {
    const page = { items: [activity], next: null };
    expect(await remoteAnswering({ value: page }).request(subjects.timeline.read, { feed: 'timeline:alice', limit: 25 })).toBe(page);
    expect(await remoteAnswering({ value: { followers: 2, following: 1 } }).request(subjects.graph.counts, { feed: 'user:bob' })).toEqual({ followers: 2, following: 1 });
  });

  it('refuse a malformed reply from another process with an internal error that names the subject and the field', async () => {
    const page = { items: [activity, { ...activity, id: 'a2', verb: 7 }], next: null };
    await expect(remoteAnswering({ value: page }).request(subjects.timeline.read, { feed: 'timeline:alice', limit: 25 })).rejects.toThrow(
      expect.objectContaining({ name: 'FeedmillError', code: 'internal', message: expect.stringMatching(/^feed\.timeline\.read answered with a malformed reply: reply\.items\.1\.verb: /) }),
    );
    await expect(remoteAnswering({ value: { applied: 'yes', position: 3 } }).request(subjects.timeline.deliver, { after: 0, position: 3, deliveries: [] })).rejects.toThrow(
      expect.objectContaining({ code: 'internal', message: expect.stringContaining('feed.timeline.deliver answered with a malformed reply: reply.applied') }),
    );
  });

  it('refuse a missing reply, and a small reply with a field the subject does not have', async () => {
    await expect(remoteAnswering({ value: undefined }).request(subjects.content.add, { feed: 'user:bob', activity, id: 'a1', receivedAt: activity.time })).rejects.toThrow(
      expect.objectContaining({ code: 'internal', message: expect.stringContaining('feed.content.add answered with a malformed reply: reply: ') }),
    );
    const status = { service: 'graph', ready: true, position: 4, lag: 0 };
    await expect(remoteAnswering({ value: status }).request(subjects.graph.status, {})).rejects.toThrow(
      expect.objectContaining({ code: 'internal', message: expect.stringContaining('feed.graph.status answered with a malformed reply') }),
    );
  });

  it('in-process, hand the request object itself to the handler, which trusts it without parsing, and return the reply object itself', async () => {
    const server = new InProcessServer();
    const page = { items: [activity], next: null };
    let received: unknown;
    server.addHandler(subjects.timeline.read, async (payload: unknown) => {
      received = parseRequest(subjects.timeline.read, payload);
      return page;
    });
    const request = { feed: 'timeline:alice', limit: 25 } as const;
    expect(await new InProcessServiceClient(server).request(subjects.timeline.read, request)).toBe(page);
    expect(received).toBe(request);
  });

  it('in-process, call the controllers’ message methods directly once found, trusting a request parsed first thing and no other', async () => {
    const page = { items: [activity], next: null };
    const received: unknown[] = [];
    @Controller()
    class Handlers {
      @MessagePattern(subjects.timeline.read)
      read(@Payload() payload: unknown) {
        received.push(parseRequest(subjects.timeline.read, payload));
        return page;
      }

      /** Parses only after an await: the request is no longer being handed over then. */
      @MessagePattern(subjects.timeline.hidden)
      async hidden(@Payload() payload: unknown) {
        await Promise.resolve();
        received.push(parseRequest(subjects.timeline.hidden, payload));
        return { items: [], next: null };
      }

      @MessagePattern(subjects.graph.counts)
      counts() {
        throw new FeedmillError('activity_not_found', 'activity a9 is not in feed user:bob', 'activityId');
      }

      @MessagePattern(subjects.graph.status)
      status() {
        throw new Error('a bug');
      }

      // Each of these needs Nest's pipeline, so it is left to Nest's handler (none here).
      @MessagePattern(subjects.content.get)
      @UsePipes(new (class Untouched implements PipeTransform {
        transform(value: unknown) {
          return value;
        }
      })())
      get(@Payload() payload: unknown) {
        return parseRequest(subjects.content.get, payload) && [];
      }

      @MessagePattern(subjects.graph.counts + '.context')
      withContext(@Payload() payload: unknown, @Ctx() context: unknown) {
        return { payload, context };
      }

      @EventPattern(subjects.content.status)
      event(@Payload() payload: unknown) {
        return { service: 'content', ready: true, position: 0, payload };
      }
    }
    @Module({ controllers: [Handlers] })
    class HandlersModule {}
    const app = await NestFactory.createApplicationContext(HandlersModule, { logger: false });
    try {
      // Nest registered no handler here (no microservice was connected): only a direct call answers.
      const server = new InProcessServer();
      const client = new InProcessServiceClient(server);
      await expect(client.request(subjects.timeline.read, { feed: 'timeline:alice', limit: 25 })).rejects.toThrow(expect.objectContaining({ code: 'unavailable' }));
      server.callControllersOf(app);
      const request = { feed: 'timeline:alice', limit: 25 } as const;
      expect(await client.request(subjects.timeline.read, request)).toBe(page);
      expect(received[0]).toBe(request);
      // A request built wrongly (here on purpose, past the compiler) is caught once the hand-over is over.
      const late = client.request(subjects.timeline.hidden, { feed: 'timeline:alice', limit: 0 } as never);
      await expect(late).rejects.toThrow(expect.objectContaining({ code: 'invalid_request', field: 'limit' }));
      // Failures arrive as the error filter would send them: a service's own error as it was, any other as internal.
      await expect(client.request(subjects.graph.counts, { feed: 'user:nobody' })).rejects.toThrow(expect.objectContaining({ code: 'activity_not_found', field: 'activityId' }));
      await expect(client.request(subjects.graph.status, {})).rejects.toThrow(expect.objectContaining({ code: 'internal' }));
      for (const subject of [subjects.content.get, `${subjects.graph.counts}.context`, subjects.content.status]) {
        await expect(server.call(subject, { ids: [] })).rejects.toThrow(expect.objectContaining({ code: 'unavailable' }));
      }
    } finally {
      await app.close();
    }
  });

  it('in-process, run a handler after the caller’s synchronous code, and never one let go before it ran', async () => {
    const server = new InProcessServer();
    const client = new InProcessServiceClient(server);
    const order: string[] = [];
    const answering = await new InProcessSubjectServer(server).answer(subjects.timeline.status, async () => {
      order.push('handler');
      return { service: 'timeline', ready: true, position: 3 };
    });
    const reply = client.request(subjects.timeline.status, {});
    order.push('caller');
    expect(await reply).toEqual({ service: 'timeline', ready: true, position: 3 });
    expect(order).toEqual(['caller', 'handler']);
    // Asked, then let go in the same turn (a partition handed over): the request is refused, not answered.
    const late = client.request(subjects.timeline.status, {});
    answering.stop();
    await expect(late).rejects.toThrow(expect.objectContaining({ code: 'unavailable' }));
    expect(order).toEqual(['caller', 'handler']);
  });

  it('parse a request that was not handed over in-process, as one from another process', () => {
    const request = { feed: 'timeline:alice', limit: 25 };
    expect(parseRequest(subjects.timeline.read, request)).not.toBe(request);
    expect(() => parseRequest(subjects.timeline.read, { feed: 'timeline:alice', limit: 0 })).toThrow(expect.objectContaining({ code: 'invalid_request', field: 'limit' }));
  });

  it('still hand on a service’s error as the service gave it', async () => {
    const failed = remoteAnswering({ error: { code: 'activity_not_found', message: 'activity a9 is not in feed user:bob', field: 'activityId' } });
    const refused = failed.request(subjects.content.remove, { feed: 'user:bob', id: 'a9', time: activity.time });
    await expect(refused).rejects.toBeInstanceOf(FeedmillError);
    await expect(refused).rejects.toThrow(expect.objectContaining({ code: 'activity_not_found', field: 'activityId' }));
  });
});

/** Never run: each line must fail to compile, or the wire does not type the client. */
function _wrongCalls(client: ServiceClient): void {
  // @ts-expect-error a counts request has no page limit
  void client.request(subjects.graph.counts, { feed: 'user:bob', limit: 3 });
  // @ts-expect-error a read needs its limit
  void client.request(subjects.timeline.read, { feed: 'timeline:alice' });
  // @ts-expect-error the subject sets the reply's type, not the caller
  void client.request<{ items: string[] }>(subjects.content.get, { ids: [] });
  void client.request(subjects.content.get, { ids: [] }).then((activities) => {
    // @ts-expect-error content answers `get` with activities, not a page
    void activities.next;
  });
}

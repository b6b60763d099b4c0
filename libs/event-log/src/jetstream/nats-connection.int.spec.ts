import { connect } from '@nats-io/transport-node';
import { startNatsServer } from '@feedmill/harness';
import { closeNats, connectNats, flushWithin } from './nats-connection.js';

/** Ending a process's NATS connection at its stop, on a real nats-server that answers, stalls, or is gone. */
describe('closeNats', () => {
  it('drains a connection whose server answers: what it published arrives, and it is closed', async () => {
    const nats = await startNatsServer();
    const listener = await connect({ servers: nats.url });
    try {
      const received: string[] = [];
      listener.subscribe('said', { callback: (_error, message) => void received.push(message.string()) });
      await listener.flush();
      const nc = await connectNats({ servers: nats.url });
      nc.publish('said', 'last words');
      await closeNats(nc);
      expect(nc.isClosed()).toBe(true);
      await listener.flush();
      expect(received).toEqual(['last words']);
    } finally {
      await listener.close();
      await nats.stop();
    }
  });

  it('closes a connection whose server stalled, once the wait is over', async () => {
    const nats = await startNatsServer();
    try {
      const nc = await connectNats({ servers: nats.url });
      // A subscription to drain: the drain then waits on the server.
      nc.subscribe('anything', { callback: () => undefined });
      await nc.flush();
      await nats.pause();
      const started = Date.now();
      await closeNats(nc, 500);
      // nats.js's drain alone was still waiting after 20 s: its flush has no timeout.
      expect(Date.now() - started).toBeGreaterThanOrEqual(450);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(nc.isClosed()).toBe(true);
    } finally {
      nats.resume();
      await nats.stop();
    }
  });

  it('closes a connection whose server is gone, without throwing', async () => {
    const nats = await startNatsServer();
    const nc = await connectNats({ servers: nats.url, reconnectTimeWait: 50 });
    await nats.kill();
    await nats.stop();
    // nats.js's drain rejects here ("connection disconnected") and leaves the connection open.
    await expect(closeNats(nc, 5_000)).resolves.toBeUndefined();
    expect(nc.isClosed()).toBe(true);
  });
});

describe('flushWithin', () => {
  it('answers when the server does, and fails once the wait is over when it stalled', async () => {
    const nats = await startNatsServer();
    const nc = await connectNats({ servers: nats.url });
    try {
      await expect(flushWithin(nc, 500)).resolves.toBeUndefined();
      await nats.pause();
      const started = Date.now();
      await expect(flushWithin(nc, 500)).rejects.toThrow(/did not answer a flush within 500 ms/);
      expect(Date.now() - started).toBeLessThan(3_000);
      nats.resume();
      // The connection is still good once the server answers again.
      await expect(flushWithin(nc, 5_000)).resolves.toBeUndefined();
    } finally {
      nats.resume();
      await nc.close();
      await nats.stop();
    }
  });
});

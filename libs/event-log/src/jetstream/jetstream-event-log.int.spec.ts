import { startNatsServer, type NatsServerHandle } from '@feedmill/harness';
import { describeEventLogContract } from '../contract/event-log.contract.js';
import { JetStreamEventLog } from './jetstream-event-log.js';

let server: NatsServerHandle;
let streamCounter = 0;

beforeAll(async () => {
  server = await startNatsServer();
});
afterAll(async () => {
  await server.stop();
});

describeEventLogContract('jetstream', {
  async open() {
    const streamName = `TEST${++streamCounter}`;
    const connectOptions = { servers: server.url, streamName };
    return {
      log: await JetStreamEventLog.connect(connectOptions),
      reopen: () => JetStreamEventLog.connect(connectOptions),
      dispose: async () => undefined,
    };
  },
});

import { WritesHeld } from './snapshottable.js';

it('holds writes until the last of two overlapping snapshots ends', async () => {
  const writes = new WritesHeld();
  writes.hold();
  writes.hold();
  let cleared = false;
  const waiting = writes.cleared().then(() => (cleared = true));
  writes.end();
  await new Promise((resolve) => setImmediate(resolve));
  expect([writes.now, cleared]).toEqual([true, false]);
  writes.end();
  await waiting;
  expect([writes.now, cleared]).toEqual([false, true]);
  // An end with nothing held changes nothing.
  writes.end();
  writes.hold();
  expect(writes.now).toBe(true);
});

import { carryRequestContext, currentRequestId, withRequestId } from './request-context.js';

afterEach(() => carryRequestContext('on'));

it('carries a request id across awaits when on', async () => {
  carryRequestContext('on');
  const seen = await withRequestId('req-7', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return currentRequestId();
  });
  expect(seen).toBe('req-7');
  expect(currentRequestId()).toBeUndefined();
});

it('carries nothing when off, and still runs the work', async () => {
  expect(carryRequestContext('off')).toBe(false);
  expect(await withRequestId('req-8', async () => currentRequestId() ?? 'none')).toBe('none');
});

it('carries by default only where the runtime keeps async context without promise hooks (Node 24 on)', () => {
  const cheap = Number(process.versions.node.split('.')[0]) >= 24 || process.execArgv.includes('--experimental-async-context-frame');
  expect(carryRequestContext('auto')).toBe(cheap);
});

import { JsonLogger } from './json-logger.js';
import { requestIdFrom, withRequestId } from './request-context.js';

/** A logger writing into an array, one parsed JSON object per line. */
function capture(level: ConstructorParameters<typeof JsonLogger>[0]['level'] = 'log') {
  const lines: Array<Record<string, unknown>> = [];
  const logger = new JsonLogger({ app: 'content', level, destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  return { logger, lines };
}

describe('JsonLogger', () => {
  it("writes one JSON line per message with Nest's context, at pino's level names", () => {
    const { logger, lines } = capture();
    logger.log('caught up at position 7', 'graph');
    logger.warn('slow', 'fanout');
    expect(lines).toEqual([
      expect.objectContaining({ level: 'info', app: 'content', context: 'graph', msg: 'caught up at position 7', pid: process.pid }),
      expect.objectContaining({ level: 'warn', context: 'fanout', msg: 'slow' }),
    ]);
    expect(Date.parse(lines[0]!['time'] as string)).not.toBeNaN();
  });

  it("takes Nest's error(message, stack, context), and an Error with its stack", () => {
    const { logger, lines } = capture();
    logger.error('stopping failed', 'Error: x\n    at here', 'content');
    logger.error(new Error('boom'), 'http');
    expect(lines[0]).toMatchObject({ level: 'error', msg: 'stopping failed', stack: 'Error: x\n    at here', context: 'content' });
    expect(lines[1]).toMatchObject({ level: 'error', msg: 'boom', context: 'http', err: expect.objectContaining({ message: 'boom', stack: expect.stringContaining('boom') }) });
  });

  it('writes nothing below LOG_LEVEL: debug lines only at debug, verbose as trace', () => {
    const quiet = capture('warn');
    quiet.logger.log('not written');
    quiet.logger.debug('nor this');
    expect(quiet.lines).toEqual([]);
    expect(quiet.logger.isLevelEnabled('debug')).toBe(false);
    const chatty = capture('verbose');
    chatty.logger.debug('handled', 'nats');
    chatty.logger.verbose('detail');
    expect(chatty.lines.map((line) => line['level'])).toEqual(['debug', 'trace']);
  });

  it('adds the id of the request being served to every line written while serving it, and only then', async () => {
    const { logger, lines } = capture();
    await withRequestId('req-1', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.log('inside');
    });
    logger.log('outside');
    expect(lines[0]).toMatchObject({ msg: 'inside', requestId: 'req-1' });
    expect(lines[1]).not.toHaveProperty('requestId');
  });
});

describe('requestIdFrom', () => {
  it("keeps a caller's printable id and replaces anything else with a UUID", () => {
    expect(requestIdFrom('trace-0042')).toBe('trace-0042');
    expect(requestIdFrom('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    for (const bad of [undefined, '', 'has space', 'quote"', 'x'.repeat(129), ['a', 'b'], 'line\nbreak']) expect(requestIdFrom(bad)).toMatch(uuid);
  });
});

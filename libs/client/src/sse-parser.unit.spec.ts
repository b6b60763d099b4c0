import { SseParser } from './sse-parser.js';

describe('SseParser', () => {
  it('reads events cut anywhere, skips comments, joins data lines and keeps the last id', () => {
    const parser = new SseParser();
    const text = 'retry: 2000\n\n: heartbeat\n\nid: e-1\nevent: added\ndata: {"a":1}\n\nid: e-2\r\nevent: removed\r\ndata: line one\r\ndata: line two\r\n\r\n';
    const messages = [...text].flatMap((char) => parser.push(char));
    expect(messages).toEqual([
      { id: 'e-1', event: 'added', data: '{"a":1}' },
      { id: 'e-2', event: 'removed', data: 'line one\nline two' },
    ]);
    expect(parser.retryMs).toBe(2000);
  });

  it('holds an event until its blank line arrives', () => {
    const parser = new SseParser();
    expect(parser.push('id: 1\ndata: x\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ id: '1', event: 'message', data: 'x' }]);
  });
});

/** One Server-Sent Event as the wire carries it. */
export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * Reads Server-Sent Events from text as it arrives, in chunks cut anywhere (the
 * specification's parsing, less what this API never sends): `id`, `event`, `data` (lines
 * joined by newlines), `retry`; comment lines (heartbeats) are skipped.
 */
export class SseParser {
  private buffer = '';
  private id: string | undefined;
  private event = '';
  private data: string[] = [];
  /** The last `retry` the server asked for, in ms. */
  retryMs: number | undefined;

  /** The messages `chunk` completes. */
  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const messages: SseMessage[] = [];
    let start = 0;
    for (;;) {
      const end = this.buffer.indexOf('\n', start);
      if (end < 0) break;
      let line = this.buffer.slice(start, end);
      start = end + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (this.data.length > 0) messages.push({ id: this.id, event: this.event || 'message', data: this.data.join('\n') });
        this.event = '';
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
      if (field === 'data') this.data.push(value);
      else if (field === 'event') this.event = value;
      else if (field === 'id') this.id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    }
    this.buffer = this.buffer.slice(start);
    return messages;
  }
}

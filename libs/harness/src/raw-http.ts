import { connect } from 'node:net';

export interface RawRequest {
  method: string;
  /** Sent as it is, unencoded characters and broken escapes included. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  contentType: string;
  /** The body as text; a 2xx event stream is cut off after its headers. */
  text: string;
}

/**
 * One HTTP/1.1 request exactly as given, on a socket of its own: what a broken or hostile
 * client sends and `fetch` would refuse or tidy up (any method, path bytes, header or body).
 * A server may answer an over-size body from its `content-length` alone and close the
 * connection: as curl does with `Expect: 100-continue`, a body over 64 KiB is sent only
 * after a short wait for such an early answer, in pieces, and no more once an answer came.
 * When the close still came first (Node drops what was received when a write fails) the
 * request is sent again, three times at most.
 */
export async function sendRaw(baseUrl: string, raw: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sendOnce(baseUrl, raw, timeoutMs);
    } catch (error) {
      if (attempt >= 3 || !raw.body?.length || !(error as { unanswered?: boolean }).unanswered) throw error;
    }
  }
}

function sendOnce(baseUrl: string, raw: RawRequest, timeoutMs: number): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const head = [`${raw.method} ${raw.path} HTTP/1.1`, `host: ${hostname}:${port}`, 'connection: close'];
  for (const [name, value] of Object.entries(raw.headers)) head.push(`${name}: ${value}`);
  if (raw.body !== undefined) head.push(`content-length: ${raw.body.length}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const response = parseResponse(Buffer.concat(chunks));
      if (response) resolve(response);
      else reject(Object.assign(error ?? new Error(`no answer to ${raw.method} ${raw.path.slice(0, 200)}`), { unanswered: true }));
    };
    const timer = setTimeout(() => finish(new Error(`no answer to ${raw.method} ${raw.path.slice(0, 200)} in ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // A 2xx event stream never ends: its headers are the answer.
      if (/^HTTP\/1\.1 2\d\d[^]*?\r\ncontent-type: text\/event-stream[^]*?\r\n\r\n/i.test(Buffer.concat(chunks).toString('latin1'))) finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    // The server may close while the body is still on its way: what it answered is read all the same.
    socket.on('error', (error) => setTimeout(() => finish(error), 50));
    socket.write(`${head.join('\r\n')}\r\n\r\n`, 'latin1');
    const body = raw.body ?? Buffer.alloc(0);
    const writeFrom = (at: number): void => {
      if (at >= body.length || settled || chunks.length > 0) return;
      socket.write(body.subarray(at, at + 65_536), (error) => !error && writeFrom(at + 65_536));
    };
    if (body.length > 65_536) setTimeout(() => writeFrom(0), 250);
    else writeFrom(0);
  });
}

function parseResponse(bytes: Buffer): RawResponse | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = bytes.toString('latin1', 0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  if (!status) return undefined;
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  let body = bytes.subarray(end + 4);
  if (headers.get('transfer-encoding')?.includes('chunked')) body = unchunked(body);
  return { status, contentType: headers.get('content-type') ?? '', text: body.toString('utf8') };
}

function unchunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; ) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(body.toString('latin1', at, lineEnd), 16);
    if (!size) break;
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

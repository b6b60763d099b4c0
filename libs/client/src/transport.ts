import { FeedmillApiError } from './errors.js';

/** Gives the bearer token of a request, or none; called for every request. */
export type TokenProvider = (request: { method: string; path: string }) => string | undefined | Promise<string | undefined>;

export interface FeedmillClientOptions {
  /** Where the API is: `http://localhost:3000`. */
  baseUrl: string;
  /**
   * The bearer token of every request, or a function that gives one per request (a token
   * that is renewed, or one per user). @defaultValue none: for a server with tokens off
   */
  token?: string | TokenProvider;
  /** Headers sent with every request. @defaultValue none */
  headers?: Record<string, string>;
  /** The `fetch` to call. @defaultValue `globalThis.fetch` */
  fetch?: typeof fetch;
}

/** Query values; undefined ones are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

export interface ApiRequest {
  method: string;
  /** From the root, with its parameters already encoded: `/v1/feeds/user/bob`. */
  path: string;
  query?: Query;
  /** Sent as JSON; a string is sent as it is (as a client with a bug would). */
  body?: unknown;
  /** Over the client's own, `authorization` included. */
  headers?: Record<string, string>;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** JSON answers parsed, other text as it is, undefined for none. */
  body: T;
}

/** Sends requests to the API: URLs, tokens, JSON both ways. */
export class ApiTransport {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: FeedmillClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Sends a request and gives back whatever was answered, errors included. */
  async send<T = unknown>(request: ApiRequest): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...this.options.headers };
    const token = await this.tokenOf(request);
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    Object.assign(headers, request.headers);
    const init: RequestInit = { method: request.method, headers };
    if (request.body !== undefined) {
      init.body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
      if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    }
    const response = await this.fetch(this.baseUrl + request.path + queryString(request.query), init);
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: parseBody(text, response.headers.get('content-type')) as T };
  }

  /** Sends a request and gives back the response as it arrives, its body unread (a stream's). */
  async open(request: ApiRequest & { signal?: AbortSignal }): Promise<Response> {
    const headers: Record<string, string> = { ...this.options.headers };
    const token = await this.tokenOf(request);
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    Object.assign(headers, request.headers);
    return this.fetch(this.baseUrl + request.path + queryString(request.query), { method: request.method, headers, signal: request.signal });
  }

  /** Sends a request and gives back the body of a 2xx answer; any other is thrown as a {@link FeedmillApiError}. */
  async call<T>(request: ApiRequest): Promise<ApiResponse<T>> {
    const response = await this.send<T>(request);
    if (response.status >= 200 && response.status < 300) return response;
    throw FeedmillApiError.fromAnswer(response.status, response.body, response.headers.get('retry-after'));
  }

  private async tokenOf(request: ApiRequest): Promise<string | undefined> {
    const token = this.options.token;
    return typeof token === 'function' ? token({ method: request.method, path: request.path }) : token;
  }
}

function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function parseBody(text: string, contentType: string | null): unknown {
  if (text === '') return undefined;
  if (contentType === null || contentType.includes('json')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from '@feedmill/contracts';
import { REQUEST_ID_HEADER } from '@feedmill/observability';

/**
 * Refusals made before any route or filter runs: Fastify's router (a path that is not
 * valid percent-encoding, a parameter past its length) and Node's HTTP parser (a method it
 * does not know, headers too large, a malformed request line). Left to themselves they
 * answer bodies of their own shape; these answer the API's `{ code, message, field }`.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = frameworkRefusal(error);
  // No route ran, nor its hooks: the id every other answer carries is set here.
  void reply.header(REQUEST_ID_HEADER, request.id).status(status).send(body);
}

function frameworkRefusal(error: FastifyError): { status: number; body: ErrorBody } {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return { status: 400, body: { code: 'invalid_request', message: 'the path is not valid percent-encoded UTF-8', field: 'path' } };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { status: 414, body: { code: 'invalid_request', message: 'a path parameter is longer than the API takes', field: 'path' } };
    default:
      return { status: error.statusCode && error.statusCode < 500 ? error.statusCode : 400, body: { code: 'invalid_request', message: error.message } };
  }
}

/** Node's HTTP parser refused the request: answered on the socket, which then closes. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, body]: [number, ErrorBody] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, { code: 'invalid_request', message: 'the request headers are larger than the server takes', field: 'headers' }]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, { code: 'invalid_request', message: 'the request did not arrive in time' }]
        : [400, { code: 'invalid_request', message: `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'})` }];
  const json = JSON.stringify(body);
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(json)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${json}`);
  }
  socket.destroy(error);
}

import { wire, type ReplyOf, type RequestOf, type Subject } from '@feedmill/contracts';
import { MAX_INPUT_DEPTH, parseInput, REQUEST_WRAPPING_LEVELS } from './validation.js';

/**
 * What the message controller of one group of {@link subjects} answers: a method for each
 * subject, named as in the group, that takes the payload as it arrives and answers with
 * the subject's reply. A controller `implements` it, so a subject left out or a reply of
 * another type does not compile.
 */
export type MessageHandlers<Group extends Readonly<Record<string, Subject>>> = {
  [Name in keyof Group]: (payload: unknown) => ReplyOf<Group[Name]> | Promise<ReplyOf<Group[Name]>>;
};

/**
 * Requests handed over in-process (the standalone): typed callers built them as their
 * subject's request, from input validated once at the edge, so parsing them again would
 * only cost. Held weakly: a request is forgotten with its object.
 */
const handedOver = new WeakSet<object>();

/** Marks a request built in this process by a typed caller, so that {@link parseRequest} trusts it. */
export function handOver<S extends Subject>(request: RequestOf<S>): RequestOf<S> {
  if (typeof request === 'object' && request !== null) handedOver.add(request);
  return request;
}

/**
 * The request being handed to a handler called directly, while the handler's synchronous
 * part runs: every handler parses its request first thing, so this trusts it at no cost per
 * call (a handler that parses later, after an await, parses it as any other).
 */
let beingHandedOver: unknown;

/** Calls `handler` with `payload`, which {@link parseRequest} trusts during the call (see {@link handOver}). */
export function callHandingOver<T>(handler: (payload: unknown) => T, payload: unknown): T {
  const outer = beingHandedOver;
  beingHandedOver = payload;
  try {
    return handler(payload);
  } finally {
    beingHandedOver = outer;
  }
}

/**
 * A request's payload, validated with its subject's request schema (see {@link parseInput}
 * for the error), unless it was handed over in-process.
 */
export function parseRequest<S extends Subject>(subject: S, payload: unknown): RequestOf<S> {
  if (typeof payload === 'object' && payload !== null && (payload === beingHandedOver || handedOver.has(payload))) return payload as RequestOf<S>;
  // TypeScript reads `wire[subject]` as any subject's entry; it is this subject's.
  return parseInput(wire[subject].request, payload, undefined, MAX_INPUT_DEPTH + REQUEST_WRAPPING_LEVELS) as RequestOf<S>;
}

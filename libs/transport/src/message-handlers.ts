import { wire, type ReplyOf, type RequestOf, type Subject } from '@feedmill/contracts';
import { parseInput } from './validation.js';

/**
 * What the message controller of one group of {@link subjects} answers: a method for each
 * subject, named as in the group, that takes the payload as it arrives and answers with
 * the subject's reply. A controller `implements` it, so a subject left out or a reply of
 * another type does not compile.
 */
export type MessageHandlers<Group extends Readonly<Record<string, Subject>>> = {
  [Name in keyof Group]: (payload: unknown) => ReplyOf<Group[Name]> | Promise<ReplyOf<Group[Name]>>;
};

/** A request's payload, validated with its subject's request schema; see {@link parseInput} for the error. */
export function parseRequest<S extends Subject>(subject: S, payload: unknown): RequestOf<S> {
  // TypeScript reads `wire[subject]` as any subject's entry; it is this subject's.
  return parseInput(wire[subject].request, payload) as RequestOf<S>;
}

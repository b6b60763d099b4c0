import type { ReplyOf, RequestOf, Subject } from '@feedmill/contracts';
import { writeArrivedPage, type PageSubject, type ServiceClient } from '@feedmill/transport';

/** Answers to some subjects, each typed by the subject's request and reply. */
export type StubAnswers = { [S in Subject]?: (payload: RequestOf<S>) => ReplyOf<S> | Promise<ReplyOf<S>> };

/**
 * A {@link ServiceClient} that answers from `answers` in this process: a service under
 * test calls its neighbours without starting them. A subject it has no answer for fails.
 */
export function stubServiceClient(answers: StubAnswers): ServiceClient {
  const request = async <S extends Subject>(subject: S, payload: RequestOf<S>): Promise<ReplyOf<S>> => {
    const answer = answers[subject];
    if (!answer) throw new Error(`the stub has no answer for ${subject}`);
    return answer(payload);
  };
  return {
    request,
    requestPage: async <S extends PageSubject>(subject: S, payload: RequestOf<S>) => writeArrivedPage(await request(subject, payload)),
    close: async () => undefined,
  };
}

import { errors, type NatsConnection } from '@nats-io/transport-node';
import { FeedmillError, type ErrorBody } from '@feedmill/contracts';
import { flushWithin } from '@feedmill/event-log';
import type { PlannerRequests } from '../fanout-cluster.port.js';
import { clusterNames } from './names.js';

type Answer = { value: unknown } | { error: ErrorBody };

/**
 * Requests for the planner on core NATS subjects `fanout-planner.<log>.<name>`, to which only
 * the planner subscribes: any fan-out process can then answer a request that only the
 * planner can serve by asking it.
 */
export class NatsPlannerRequests implements PlannerRequests {
  constructor(
    private readonly nc: NatsConnection,
    private readonly logStream: string,
  ) {}

  private subjectOf(name: string): string {
    return clusterNames(this.logStream).plannerRequestSubject(name);
  }

  async serve(name: string, answer: () => Promise<unknown>): Promise<{ stop(): void }> {
    const subscription = this.nc.subscribe(this.subjectOf(name), {
      // Should two processes plan for a moment, one of them answers.
      queue: 'planner',
      callback: (error, message) => {
        if (error) return;
        void answer().then(
          (value) => message.respond(JSON.stringify({ value } satisfies Answer)),
          (failure: unknown) => {
            const body = failure instanceof FeedmillError ? failure.toBody() : { code: 'internal' as const, message: failure instanceof Error ? failure.message : String(failure) };
            message.respond(JSON.stringify({ error: body } satisfies Answer));
          },
        );
      },
    });
    // A round trip, so that a request sent once this resolves is answered. Bounded: on a
    // stalled link nats.js's flush waits until its pings notice, minutes later, and the
    // caller would get no handle to stop serving with. The subscription stands either way,
    // and the server learns of it once the link answers again.
    await flushWithin(this.nc).catch(() => undefined);
    return { stop: () => subscription.unsubscribe() };
  }

  async ask(name: string, timeoutMs: number): Promise<unknown> {
    let answer: Answer;
    try {
      answer = (await this.nc.request(this.subjectOf(name), '', { timeout: timeoutMs })).json<Answer>();
    } catch (error) {
      if (error instanceof errors.RequestError && error.isNoResponders()) {
        throw new FeedmillError('unavailable', 'no fan-out process plans at the moment (one takes over once the last planner’s lease runs out): try again shortly', undefined, { cause: error });
      }
      if (error instanceof errors.TimeoutError) throw new FeedmillError('unavailable', `the fan-out planner did not answer ${name} in ${timeoutMs} ms`, undefined, { cause: error });
      throw error;
    }
    if ('error' in answer) throw FeedmillError.fromBody(answer.error) ?? new FeedmillError('internal', answer.error.message);
    return answer.value;
  }
}

import { runHttpLoad, type HttpLoadResult, type PlannedRequest } from './http-load.js';
import { findWrk, runWrkLoad } from './wrk-load.js';

export interface HttpPhase {
  /** Requests of one kind, made in order and cycled. */
  requests: readonly PlannedRequest[];
  connections: number;
}

/**
 * The benchmark's HTTP load generator: wrk, a C program that leaves the system under test
 * nearly all of the machine, when it can be had; autocannon (in this Node process, about a
 * core of its own at full load) otherwise.
 */
export class HttpDriver {
  private readonly wrk = findWrk();

  constructor(private readonly baseUrl: () => string) {}

  get name(): 'wrk' | 'autocannon' {
    return this.wrk ? 'wrk' : 'autocannon';
  }

  /** One phase, for `seconds` or until `amount` requests were answered. */
  run(phase: HttpPhase & ({ seconds: number } | { amount: number })): Promise<HttpLoadResult> {
    const { requests, connections } = phase;
    const length = 'seconds' in phase ? { seconds: phase.seconds } : { amount: phase.amount };
    if (this.wrk) return runWrkLoad({ wrk: this.wrk, baseUrl: this.baseUrl(), connections, requests, ...length });
    let next = 0;
    return runHttpLoad({ baseUrl: this.baseUrl(), connections, next: () => requests[next++ % requests.length], ...length });
  }
}

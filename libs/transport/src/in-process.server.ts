import type { INestApplicationContext } from '@nestjs/common';
import { EXCEPTION_FILTERS_METADATA, GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA } from '@nestjs/common/constants.js';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { BaseRpcContext, Server, type CustomTransportStrategy } from '@nestjs/microservices';
import { PARAM_ARGS_METADATA, PATTERN_HANDLER_METADATA, PATTERN_METADATA } from '@nestjs/microservices/constants.js';
import { PatternHandler } from '@nestjs/microservices/enums/pattern-handler.enum.js';
import { RpcParamtype } from '@nestjs/microservices/enums/rpc-paramtype.enum.js';
import { isObservable, lastValueFrom, type Observable } from 'rxjs';
import { FeedmillError } from '@feedmill/contracts';
import { callHandingOver, handOver } from './message-handlers.js';
import { failureBody, RpcErrorFilter } from './rpc-error.filter.js';

/** A handler called as it is: a message controller's method bound to its instance, or a subject's handler. */
export type DirectHandler = (payload: unknown) => unknown;

/**
 * A Nest transport for the standalone process: the same `@MessagePattern` controllers
 * that serve NATS in the cluster, called in-process by {@link InProcessServiceClient}.
 *
 * Once {@link callControllersOf} has found them, their methods are called directly, not
 * through the handlers Nest registers here: Nest's per-call pipeline (an execution context,
 * the interceptor and pipe chains, the exception filter, an observable per reply) costs more
 * than the call it wraps on every timeline read and post of the standalone, and the message
 * controllers use none of it but `@Payload()` and the error filter, whose work
 * {@link failureBody} does here. A method that uses more of it is left to Nest's handler
 * (see {@link callsDirectly}). The subjects a process answers while it runs
 * (`InProcessSubjectServer`) are called directly too.
 *
 * Either way a handler runs after the caller's synchronous code, as over any transport: a
 * caller may change its state after asking, before awaiting the reply.
 */
export class InProcessServer extends Server implements CustomTransportStrategy {
  listen(callback: () => void): void {
    callback();
  }

  close(): void {}

  on(): void {}

  unwrap<T>(): T {
    return this as unknown as T;
  }

  private readonly direct = new Map<string, DirectHandler>();

  /** Answers `subject` with `handler`, called as it is. */
  answerDirectly(subject: string, handler: DirectHandler): void {
    this.direct.set(subject, handler);
  }

  /**
   * Calls the `@MessagePattern` methods of `app`'s controllers directly from now on. Call once
   * the app is initialized (its controllers made).
   */
  callControllersOf(app: INestApplicationContext): void {
    const scanner = new MetadataScanner();
    for (const module of app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        // A controller made per request has no one instance to call.
        if (!wrapper.instance || !wrapper.isDependencyTreeStatic()) continue;
        const controller = wrapper.instance as Record<string, unknown>;
        for (const name of scanner.getAllMethodNames(Object.getPrototypeOf(controller))) {
          const method = controller[name] as (payload: unknown) => unknown;
          const patterns = Reflect.getMetadata(PATTERN_METADATA, method) as unknown[] | undefined;
          if (!patterns || !callsDirectly(wrapper, name, method)) continue;
          for (const pattern of patterns) if (typeof pattern === 'string') this.answerDirectly(pattern, method.bind(controller));
        }
      }
    }
  }

  /** Stops answering `subject` (a timeline partition let go). */
  removeHandler(subject: string): void {
    this.messageHandlers.delete(subject);
    this.direct.delete(subject);
  }

  /**
   * The reply to `payload` on `subject`, which trusts it as a request built by typed code in
   * this process (see `parseRequest`). A failure rejects with the {@link ErrorBody} a
   * service's error filter would send.
   */
  async call(subject: string, payload: unknown): Promise<unknown> {
    await Promise.resolve();
    // Looked up once it runs: a subject let go meanwhile (a partition) is not answered.
    const handler = this.direct.get(subject);
    if (!handler) return lastValueFrom(await this.dispatch(subject, handOver(payload as never)), { defaultValue: undefined });
    try {
      const reply = await callHandingOver(handler, payload);
      return isObservable(reply) ? await lastValueFrom(reply, { defaultValue: undefined }) : reply;
    } catch (error) {
      throw failureBody(error);
    }
  }

  /** Through the handler Nest registered for `subject`, as a transport calls it. */
  async dispatch(subject: string, payload: unknown): Promise<Observable<unknown>> {
    // Subjects are plain strings, registered as they are: Nest's own lookup first tries each as JSON.
    const handler = this.messageHandlers.get(subject) ?? this.getHandlerByPattern(subject);
    if (!handler) throw new FeedmillError('unavailable', `no handler for ${subject} in this process`);
    return this.transformToObservable(await handler(payload, new BaseRpcContext([subject])));
  }
}

/**
 * Whether a controller's message method can be called as it is, with the same result as
 * through Nest's handler: a message (not event) handler whose only parameter, if any, is the
 * whole payload (`@Payload()` without pipes), with no guard, interceptor or pipe and no
 * exception filter but {@link RpcErrorFilter}, on the method or its controller.
 */
function callsDirectly(wrapper: InstanceWrapper, name: string, method: object): boolean {
  if (Reflect.getMetadata(PATTERN_HANDLER_METADATA, method) !== PatternHandler.MESSAGE) return false;
  const onBoth = (key: string) => [...((Reflect.getMetadata(key, wrapper.metatype as object) as unknown[] | undefined) ?? []), ...((Reflect.getMetadata(key, method) as unknown[] | undefined) ?? [])];
  if ([GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA].some((key) => onBoth(key).length > 0)) return false;
  if (onBoth(EXCEPTION_FILTERS_METADATA).some((filter) => filter !== RpcErrorFilter)) return false;
  const params = (Reflect.getMetadata(PARAM_ARGS_METADATA, wrapper.metatype as object, name) as Record<string, { index: number; data?: unknown; pipes?: unknown[] }> | undefined) ?? {};
  return Object.entries(params).every(([key, param]) => key === `${RpcParamtype.PAYLOAD}:0` && param.data === undefined && (param.pipes ?? []).length === 0);
}

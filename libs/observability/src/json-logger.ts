import { pino, type Logger as Pino, type LevelWithSilent } from 'pino';
import { currentRequestId } from './request-context.js';

/** Nest's log levels, as `LOG_LEVEL` names them, most severe first. */
export type NestLogLevel = 'fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose';

/** The pino level each Nest level writes at. */
const PINO_LEVEL: Record<NestLogLevel, LevelWithSilent> = { fatal: 'fatal', error: 'error', warn: 'warn', log: 'info', debug: 'debug', verbose: 'trace' };

/**
 * Nest's `LoggerService` writing one JSON line per message with pino: `level`, `time`,
 * `app`, `context` (the Nest logger's name), `msg`, and `requestId` when the line is written
 * while serving a request (see {@link withRequestId}). Installed with `Logger.overrideLogger`,
 * it takes every `new Logger(context).log(...)` in the code, Nest's own included, so none
 * of those calls changes.
 *
 * Written synchronously to stdout: a process that exits right after logging (a failed
 * start, the end of a SIGTERM) loses no line.
 */
export class JsonLogger {
  private readonly pino: Pino;

  constructor(options: { app: string; level: NestLogLevel; destination?: NodeJS.WritableStream | { write(line: string): void } }) {
    this.pino = pino(
      {
        level: PINO_LEVEL[options.level],
        base: { app: options.app, pid: process.pid },
        messageKey: 'msg',
        formatters: { level: (label) => ({ level: label }) },
        timestamp: pino.stdTimeFunctions.isoTime,
        mixin: () => {
          const requestId = currentRequestId();
          return requestId === undefined ? {} : { requestId };
        },
      },
      options.destination ?? pino.destination({ dest: 1, sync: true }),
    );
  }

  /** Whether a message at `level` would be written: hot paths ask before they build one. */
  isLevelEnabled(level: NestLogLevel): boolean {
    return this.pino.isLevelEnabled(PINO_LEVEL[level]);
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params, true);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params, true);
  }

  /** Nest passes its levels when an application starts; `LOG_LEVEL` has set them already. */
  setLogLevels(): void {}

  /**
   * Nest calls `log(message, context)` and `error(message, stack, context)`: the last string
   * parameter is the context. An `Error` as the message is logged with its stack.
   */
  private write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', message: unknown, params: unknown[], mayHaveStack = false): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const rest = [...params];
    const context = typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const stack = mayHaveStack && typeof rest[0] === 'string' ? (rest.shift() as string) : undefined;
    const fields: Record<string, unknown> = {};
    if (context !== undefined) fields['context'] = context;
    if (stack !== undefined) fields['stack'] = stack;
    if (message instanceof Error) {
      fields['err'] = message;
      this.pino[level](fields, message.message);
    } else if (typeof message === 'string') {
      this.pino[level](fields, message);
    } else {
      fields['data'] = message;
      this.pino[level](fields);
    }
  }
}

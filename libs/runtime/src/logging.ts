import { Logger, type LoggerService, type LogLevel } from '@nestjs/common';
import { JsonLogger } from '@feedmill/observability';

const LEVELS: LogLevel[] = ['error', 'warn', 'log', 'debug', 'verbose'];

/** The Nest log levels at or above `level`. */
export function logLevels(level: LogLevel): LogLevel[] {
  return LEVELS.slice(0, LEVELS.indexOf(level) + 1);
}

/** The process's JSON logger, once {@link configureLogging} installed it. */
let installed: JsonLogger | undefined;

/**
 * Makes every Nest logger of the process write JSON lines at `LOG_LEVEL` and above, named
 * `app`, before anything logs (what runs before Nest starts included). Each line written
 * while a request is served carries its `requestId`.
 */
export function configureLogging(level: LogLevel, app: string): JsonLogger {
  installed = new JsonLogger({ app, level });
  Logger.overrideLogger(installed);
  // The levels too, so that `Logger.isLevelEnabled` answers: per-request lines are built only when written.
  Logger.overrideLogger(logLevels(level));
  return installed;
}

/**
 * What a Nest application of this process logs with: the JSON logger when the process
 * installed it, else Nest's console logger at `level` (tests that build applications in
 * their own process).
 */
export function processLogger(level: LogLevel): LoggerService | LogLevel[] {
  return installed ?? logLevels(level);
}

/**
 * Runs a process's start-up. A configuration mistake prints one line naming what is
 * wrong; anything else prints its stack. Either way the process exits with 1.
 */
export function runMain(start: () => Promise<void>): void {
  start().catch((error: unknown) => {
    const isConfig = error instanceof Error && error.name === 'ConfigError';
    console.error(isConfig ? `feedmill: ${error.message}` : error);
    process.exit(1);
  });
}

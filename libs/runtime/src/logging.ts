import { Logger, type LogLevel } from '@nestjs/common';

const LEVELS: LogLevel[] = ['error', 'warn', 'log', 'debug', 'verbose'];

/** The Nest log levels at or above `level`. */
export function logLevels(level: LogLevel): LogLevel[] {
  return LEVELS.slice(0, LEVELS.indexOf(level) + 1);
}

/** Applies `LOG_LEVEL` before anything logs, including what runs before Nest starts. */
export function configureLogging(level: LogLevel): LogLevel[] {
  const levels = logLevels(level);
  Logger.overrideLogger(levels);
  return levels;
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

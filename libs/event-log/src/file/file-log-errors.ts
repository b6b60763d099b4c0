/**
 * A file log that holds damage a crash cannot explain (see `TailDamage`): it refuses to
 * open rather than serve records it cannot trust or cut records it acknowledged.
 */
export class CorruptLogError extends Error {
  override readonly name = 'CorruptLogError';
  readonly code = 'corrupt_log';

  constructor(
    readonly path: string,
    /** Where the damage starts: every byte before it holds whole, checked records. */
    readonly offset: number,
    /** The position the first damaged record would have had. */
    readonly position: number,
    readonly reason: string,
  ) {
    super(
      `${path}: the record at byte ${offset} (log position ${position}) ${reason}. ` +
        'A crash tears only the last, unacknowledged write, so this is damage to acknowledged records, and the log refuses to open. ' +
        `Restore the file from a backup; or, to keep the ${position - 1} records before it and lose the rest, keep a copy of the file and cut it: truncate -s ${offset} '${path}'`,
    );
  }
}

/** The log's directory or file cannot be written: a start says so instead of failing on the first post. */
export class LogNotWritableError extends Error {
  override readonly name = 'LogNotWritableError';
  readonly code = 'log_not_writable';

  constructor(
    readonly dir: string,
    readonly systemError: NodeJS.ErrnoException,
  ) {
    super(
      `the file log in ${dir} cannot be written (${systemError.code ?? 'error'}: ${systemError.message}): ` +
        'the process needs to create and write files there; give it write access (a read-only mount or volume cannot hold the log) or set FEEDMILL_DATA_DIR to a writable directory',
      { cause: systemError },
    );
  }
}

/**
 * An append the file log could not make durable (a full disk, an I/O error): nothing of it
 * is kept, it was not acknowledged, and the log takes appends again (that may succeed once
 * space is freed).
 */
export class LogWriteFailedError extends Error {
  override readonly name = 'LogWriteFailedError';
  readonly code = 'log_write_failed';

  constructor(readonly systemError: NodeJS.ErrnoException) {
    super(`the event log could not write (${systemError.code ?? 'error'}: ${systemError.message}); nothing of this append was kept`, { cause: systemError });
  }
}

const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/** Whether an error from opening or locking the log's files means the directory cannot be written. */
export function isNotWritable(error: unknown): error is NodeJS.ErrnoException {
  return NOT_WRITABLE.has((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}

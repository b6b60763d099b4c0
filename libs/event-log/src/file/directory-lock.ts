import { open, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { tryLock } from 'fs-native-extensions';

export interface DirectoryLock {
  release(): Promise<void>;
}

export class DirectoryLockedError extends Error {
  override readonly name = 'DirectoryLockedError';
  constructor(
    readonly dir: string,
    /** The owner's pid as it wrote it in the lock file; undefined while it has not yet. */
    readonly pid: number | undefined,
  ) {
    super(`${dir} is in use by ${pid === undefined ? 'another process' : `process ${pid}`}; one process at a time may own a file log`);
  }
}

/**
 * Takes `dir/LOCK` for this process with an operating-system lock on the open file, which
 * the kernel lets go of when the process ends however it ends: a log whose process was
 * killed restarts without a hand-made cleanup, and no two starters can both take over a lock
 * left behind (as they could when the lock was the file's existence and the pid in it). The
 * lock is held on the open file description, so a second open in this process is refused
 * too. The file stays when released: removing it would let one process lock the old file and
 * another a new one. The pid in it is only for the message another process shows.
 */
export async function acquireDirectoryLock(dir: string): Promise<DirectoryLock> {
  const path = resolve(dir, 'LOCK');
  const handle = await open(path, 'a+');
  let locked: boolean;
  try {
    locked = tryLock(handle.fd);
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (!locked) {
    await handle.close();
    const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
    throw new DirectoryLockedError(dir, Number.isInteger(pid) ? pid : undefined);
  }
  try {
    await handle.truncate(0);
    await handle.write(String(process.pid));
  } catch (error) {
    // Closing lets go of the lock: a start that failed here holds nothing.
    await handle.close();
    throw error;
  }
  return {
    // Closing the file lets go of the lock.
    release: () => handle.close(),
  };
}

import { open, readFile, rm } from 'node:fs/promises';
import { resolve } from 'node:path';

/** Locks this process holds: a stale lock file with our own pid (a restarted container) is not one of them. */
const heldByThisProcess = new Set<string>();

export interface DirectoryLock {
  release(): Promise<void>;
}

export class DirectoryLockedError extends Error {
  override readonly name = 'DirectoryLockedError';
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`${dir} is in use by process ${pid}; one process at a time may own a file log`);
  }
}

/**
 * Takes `dir/LOCK` for this process. A lock left by a process that no longer runs (after a
 * kill -9) is taken over, so a crashed log restarts without a hand-made cleanup.
 */
export async function acquireDirectoryLock(dir: string): Promise<DirectoryLock> {
  const path = resolve(dir, 'LOCK');
  if (heldByThisProcess.has(path)) throw new DirectoryLockedError(dir, process.pid);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      heldByThisProcess.add(path);
      return {
        release: async () => {
          heldByThisProcess.delete(path);
          await rm(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(pid) && pid !== process.pid && isRunning(pid)) throw new DirectoryLockedError(dir, pid);
      await rm(path, { force: true });
    }
  }
  throw new Error(`could not take the lock ${path}`);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

import { open } from 'node:fs/promises';

/**
 * Makes the names in `dir` durable: a file created or renamed there is only sure to be found
 * after a crash once its directory is fsynced too (fsync of the file alone does not say so).
 */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

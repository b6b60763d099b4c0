import type { FileHandle } from 'node:fs/promises';

/**
 * Writes `buffers` one after another at the file's current end (or `position`), in one call
 * when it takes them all (no copy into one buffer). A write may take less than asked (a disk
 * that fills up does, and a single write stops short of 2 GiB): the rest is written until all
 * of it is, or an error says why not.
 */
export async function writeFully(handle: FileHandle, buffers: readonly Buffer[], position?: number): Promise<void> {
  const length = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
  let { bytesWritten: written } = await handle.writev(buffers as Buffer[], position);
  if (written === length) return;
  const rest = Buffer.concat(buffers);
  while (written < length) {
    const { bytesWritten } = await handle.write(rest, written, length - written, position === undefined ? undefined : position + written);
    if (bytesWritten === 0) throw Object.assign(new Error('the file took no bytes'), { code: 'EIO' });
    written += bytesWritten;
  }
}

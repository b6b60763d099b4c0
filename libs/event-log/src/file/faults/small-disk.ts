import { execFileSync } from 'node:child_process';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A directory that fills up: a real tmpfs of `bytes` when this process may mount one (root,
 * and a kernel that lets it), otherwise a simulation at the file-system layer that makes
 * every `FileHandle.write` and `writev` in this process behave as a full disk once `bytes` were written
 * (a short write, then ENOSPC), with `free()` giving the space back either way.
 */
export interface SmallDisk {
  dir: string;
  kind: 'tmpfs' | 'simulated';
  /** Takes the rest of the space (a file on tmpfs; the budget in the simulation). */
  fill(): Promise<void>;
  /** Gives the space `fill` took back. */
  free(): Promise<void>;
  /**
   * Makes the directory read-only: the tmpfs remounted, or `chmod 555` otherwise. False when
   * it cannot: root without a tmpfs ignores file modes.
   */
  makeReadOnly(): boolean;
  dispose(): Promise<void>;
}

export async function smallDisk(dir: string, bytes: number): Promise<SmallDisk> {
  if (mounted(dir, bytes)) {
    let filler: string | undefined;
    return {
      dir,
      kind: 'tmpfs',
      async fill() {
        filler = join(dir, 'filler');
        const handle = await open(filler, 'w');
        const chunk = Buffer.alloc(4096, 1);
        try {
          for (;;) await handle.write(chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        } finally {
          await handle.close();
        }
      },
      async free() {
        if (filler) execFileSync('rm', ['-f', filler]);
      },
      makeReadOnly: () => (execFileSync('mount', ['-o', 'remount,ro', dir]), true),
      dispose: async () => void execFileSync('umount', [dir]),
    };
  }
  const simulated = await simulatedFullDisk();
  return {
    dir,
    kind: 'simulated',
    // A few bytes left, so that the next write is cut short before ENOSPC, as on a real disk.
    fill: async () => simulated.setBudget(37),
    free: async () => simulated.setBudget(Infinity),
    makeReadOnly: () => process.getuid?.() !== 0 && (execFileSync('chmod', ['555', dir]), true),
    dispose: async () => {
      simulated.restore();
      execFileSync('chmod', ['755', dir]);
    },
  };
}

function mounted(dir: string, bytes: number): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Patches `FileHandle.prototype.write` and `writev` (the calls the file log writes with) to run out of space on demand. */
async function simulatedFullDisk(): Promise<{ setBudget(bytes: number): void; restore(): void }> {
  const probe = await open(process.execPath, 'r');
  const prototype = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const original = prototype.write;
  const write = original as (this: FileHandle, ...args: unknown[]) => Promise<unknown>;
  let budget = Infinity;
  prototype.write = async function (this: FileHandle, buffer: unknown, offset?: unknown, length?: unknown, position?: unknown) {
    if (Buffer.isBuffer(buffer) && typeof offset === 'number' && typeof length === 'number') {
      if (budget <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      const allowed = Math.min(length, budget);
      budget -= allowed;
      return write.call(this, buffer, offset, allowed, position);
    }
    return write.call(this, buffer, offset, length, position);
  } as typeof original;
  // The log writes a group with writev: cut short the same way, by writing what fits with write.
  const originalWritev = prototype.writev;
  prototype.writev = async function (this: FileHandle, buffers: NodeJS.ArrayBufferView[], position?: number) {
    const length = buffers.reduce((sum, buffer) => sum + buffer.byteLength, 0);
    if (length <= budget) {
      budget -= length;
      return originalWritev.call(this, buffers, position);
    }
    const joined = Buffer.concat(buffers.map((buffer) => Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength)));
    const { bytesWritten } = await (prototype.write as (this: FileHandle, ...args: unknown[]) => Promise<{ bytesWritten: number }>).call(this, joined, 0, joined.length, position);
    return { bytesWritten, buffers };
  } as typeof originalWritev;
  return {
    setBudget: (bytes) => void (budget = bytes),
    restore: () => {
      prototype.write = original;
      prototype.writev = originalWritev;
    },
  };
}

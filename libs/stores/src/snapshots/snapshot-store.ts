import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFully } from '@feedmill/event-log';
import { decodeSnapshot, encodeSnapshot, SnapshotCorruptError } from './snapshot-file.js';

/** Where the store reports what it skips or deletes: the application's logger. */
export interface SnapshotLogger {
  log(message: string): void;
  warn(message: string): void;
}

export interface LoadedSnapshot {
  position: number;
  payload: Uint8Array;
  file: string;
}

const NAME = /^[a-z][a-z0-9-]*$/;
const SUFFIX = '.snapshot';
const TEMP_SUFFIX = '.tmp';
/** Good snapshots kept per name: the newest, and one to fall back on if the newest goes bad. */
const KEEP = 2;

/**
 * Snapshot files in one directory, one per projection name and log position
 * (`content.0000000000001234.snapshot`). A file appears whole or not at all (temp file,
 * fsync, rename, fsync of the directory); a file that does not verify is never trusted.
 */
export class SnapshotStore {
  /** Positions of verified or written snapshots per name, newest first. */
  private readonly good = new Map<string, number[]>();

  constructor(
    readonly dir: string,
    private readonly logger: SnapshotLogger,
  ) {}

  /**
   * The newest snapshot of `name` that verifies, of those that cover at most `atMost`; skips
   * (and logs) those that do not verify, and deletes files older than the newest two good
   * ones, and temp files a crash left. Files past `atMost` are left as they are.
   */
  async load(name: string, atMost = Infinity): Promise<LoadedSnapshot | undefined> {
    checkName(name);
    const files = await this.filesOf(name);
    for (const temp of files.temps) await rm(join(this.dir, temp), { force: true });
    const good: Array<LoadedSnapshot> = [];
    for (const { file, position } of files.snapshots) {
      if (good.length === KEEP) break;
      if (position > atMost) continue;
      try {
        const contents = decodeSnapshot(await readFile(join(this.dir, file)));
        if (contents.name !== name || contents.position !== position) {
          throw new SnapshotCorruptError(`header says ${contents.name} at ${contents.position}, the file name says ${name} at ${position}`);
        }
        good.push({ position, payload: contents.payload, file });
      } catch (error) {
        const why = error instanceof SnapshotCorruptError ? error.message : String(error);
        this.logger.warn(`skipped snapshot ${join(this.dir, file)}: ${why}`);
      }
    }
    this.good.set(
      name,
      good.map((g) => g.position),
    );
    await this.prune(name);
    return good[0];
  }

  /** Writes a snapshot atomically and durably, then deletes those it makes unnecessary. Returns the file's path. */
  async save(name: string, position: number, payload: Uint8Array): Promise<string> {
    checkName(name);
    await mkdir(this.dir, { recursive: true });
    const file = fileName(name, position);
    const path = join(this.dir, file);
    const temp = `${path}.${process.pid}${TEMP_SUFFIX}`;
    const handle = await open(temp, 'w');
    try {
      // All of it, or an error: a short write renamed into place would be a snapshot that fails its checksum, and prune would have let the last good one go.
      await writeFully(handle, encodeSnapshot({ name, position, payload }));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    const good = (this.good.get(name) ?? []).filter((p) => p !== position);
    this.good.set(name, [position, ...good].sort((a, b) => b - a));
    await this.prune(name);
    return path;
  }

  /**
   * Deletes every snapshot of `name` below `position`: after an erasure, the snapshots taken
   * before it hold what was erased, and none may stay to fall back on.
   */
  async deleteBefore(name: string, position: number): Promise<void> {
    checkName(name);
    this.good.set(
      name,
      (this.good.get(name) ?? []).filter((p) => p >= position),
    );
    for (const { file, position: at } of (await this.filesOf(name)).snapshots) {
      if (at < position) await rm(join(this.dir, file), { force: true });
    }
  }

  /** Deletes every file of `name` older than its second-newest good snapshot. */
  private async prune(name: string): Promise<void> {
    const good = this.good.get(name) ?? [];
    if (good.length < KEEP) return;
    const oldestKept = good[KEEP - 1]!;
    this.good.set(name, good.slice(0, KEEP));
    for (const { file, position } of (await this.filesOf(name)).snapshots) {
      if (position < oldestKept) await rm(join(this.dir, file), { force: true });
    }
  }

  /** Snapshot files of `name`, newest first, and its temp files. */
  private async filesOf(name: string): Promise<{ snapshots: Array<{ file: string; position: number }>; temps: string[] }> {
    let entries: string[];
    try {
      entries = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { snapshots: [], temps: [] };
      throw error;
    }
    const prefix = `${name}.`;
    const snapshots: Array<{ file: string; position: number }> = [];
    const temps: string[] = [];
    for (const file of entries) {
      if (!file.startsWith(prefix)) continue;
      if (file.endsWith(TEMP_SUFFIX)) temps.push(file);
      else if (file.endsWith(SUFFIX)) {
        const digits = file.slice(prefix.length, -SUFFIX.length);
        if (/^\d+$/.test(digits)) snapshots.push({ file, position: Number(digits) });
      }
    }
    snapshots.sort((a, b) => b.position - a.position);
    return { snapshots, temps };
  }
}

function fileName(name: string, position: number): string {
  return `${name}.${String(position).padStart(16, '0')}${SUFFIX}`;
}

function checkName(name: string): void {
  if (!NAME.test(name)) throw new Error(`snapshot name ${JSON.stringify(name)} must match ${NAME}`);
}

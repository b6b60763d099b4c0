import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFully } from '../write-fully.js';
import { smallDisk } from './small-disk.js';

let dir: string;
let disk: Awaited<ReturnType<typeof smallDisk>>;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'feedmill-writefully-'));
  disk = await smallDisk(dir, 1024 * 1024);
  console.log(disk.kind === 'tmpfs' ? 'write fully: a real 1 MiB tmpfs' : 'write fully: no tmpfs here: ENOSPC simulated at the fs layer');
});
afterEach(async () => {
  await disk.dispose();
  await rm(dir, { recursive: true, force: true });
});

it('writes every buffer in order, or fails: never a short write taken for done', async () => {
  const path = join(dir, 'file');
  const handle = await open(path, 'w');
  try {
    const parts = [Buffer.from('one,'), Buffer.alloc(3000, 'x'), Buffer.from(',three')];
    await writeFully(handle, parts);
    expect((await readFile(path)).equals(Buffer.concat(parts))).toBe(true);
    // More than the disk holds: the first call writes what fits, the rest fails, and says why.
    await expect(writeFully(handle, [Buffer.alloc(600 * 1024, 1), Buffer.alloc(600 * 1024, 2)])).rejects.toMatchObject({ code: 'ENOSPC' });
  } finally {
    await handle.close();
  }
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadFeedConfig } from './feed-config-file.js';
import { loadRuntimeConfig } from './runtime-config.js';

describe('configuration', () => {
  it('fills defaults and names the variable that is wrong', () => {
    expect(loadRuntimeConfig({}).PORT).toBe(3000);
    expect(() => loadRuntimeConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadRuntimeConfig({ LOG: 'mongo' })).toThrow(/LOG/);
    expect(() => loadRuntimeConfig({ LOG: 'kurrentdb' })).toThrow(/KURRENTDB_URL/);
    expect(() => loadRuntimeConfig({ STORE: 'mongodb' })).toThrow(/MONGODB_URL/);
    expect(loadRuntimeConfig({}).STORE).toBe('memory');
    expect(loadRuntimeConfig({ LOG: 'kurrentdb', KURRENTDB_URL: 'kurrentdb://127.0.0.1:2113?tls=false' }).LOG).toBe('kurrentdb');
  });

  it('names the file and the key of a bad feed config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'feedmill-config-'));
    const path = join(dir, 'feeds.json');
    writeFileSync(path, JSON.stringify({ groups: { timeline: { kind: 'timeline', cap: -1 } } }));
    expect(() => loadFeedConfig(path)).toThrow(new RegExp(`${path}.*groups\\.timeline\\.cap`));
    writeFileSync(path, '{ not json');
    expect(() => loadFeedConfig(path)).toThrow(/cannot read it as JSON/);
    expect(loadFeedConfig(undefined).groups['user']).toEqual({ kind: 'producer' });
  });
});

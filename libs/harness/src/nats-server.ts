import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export interface NatsServerHandle {
  url: string;
  port: number;
  /** JetStream's store directory (removed on stop). */
  storeDir: string;
  stop(): Promise<void>;
}

const CANDIDATES = ['nats-server', '/usr/sbin/nats-server', '/usr/local/bin/nats-server', '/usr/bin/nats-server'];

/** Path of a runnable nats-server binary, or undefined. */
export function findNatsServer(): string | undefined {
  const fromEnv = process.env['NATS_SERVER_BIN'];
  for (const candidate of fromEnv ? [fromEnv, ...CANDIDATES] : CANDIDATES) {
    const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

/**
 * Starts a private nats-server with JetStream on a free port and a fresh store directory,
 * and waits until it accepts clients. Throws when no binary is installed: a suite that
 * needs NATS must fail, not pass silently.
 */
export async function startNatsServer(): Promise<NatsServerHandle> {
  const binary = findNatsServer();
  if (!binary) {
    throw new Error('nats-server was not found on PATH (install it: apt-get install -y nats-server, or set NATS_SERVER_BIN)');
  }
  const port = await freePort();
  const storeDir = await mkdtemp(join(tmpdir(), 'feedmill-nats-'));
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await waitForReady(child, port);
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}

function waitForReady(child: ChildProcess, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`nats-server on port ${port} did not start in 10 s:\n${output}`)), 10_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Server is ready')) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null) => fail(new Error(`nats-server exited with ${code}:\n${output}`));
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    function fail(error: Error) {
      cleanup();
      child.kill('SIGKILL');
      reject(error);
    }
    function cleanup() {
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      child.stderr?.resume();
    }
  });
}

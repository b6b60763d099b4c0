import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export interface NatsServerHandle {
  url: string;
  port: number;
  /** The JetStream store directory. */
  storeDir: string;
  /** SIGTERM, wait for the exit, and remove the store directory when this handle made it. */
  stop(): Promise<void>;
  /** SIGKILL and wait for the exit, keeping the store: a crash, to restart from with the same `port` and `storeDir`. */
  kill(): Promise<void>;
  /**
   * SIGSTOP: the server keeps every connection open and answers nothing, as over a stalled
   * link, until {@link resume}. Resolves once every thread of it has stopped (on Linux, where
   * its state says so), so that nothing sent after it is answered.
   */
  pause(): Promise<void>;
  /** SIGCONT after {@link pause}. */
  resume(): void;
}

export interface NatsServerOptions {
  /** @defaultValue a free port */
  port?: number;
  /** @defaultValue a fresh temporary directory, removed by `stop` */
  storeDir?: string;
  /** JetStream's limit of file storage, as nats-server's config takes it (`2MB`): a store that fills up. @defaultValue the server's (most of the disk) */
  maxFileStore?: string;
  /** The largest message, in bytes (`max_payload`). @defaultValue the server's, 1 MiB */
  maxPayload?: number;
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
 * Starts a private nats-server with JetStream on a free port and a fresh store directory
 * (or the given ones, to restart a killed server on its store), and waits until it accepts
 * clients. Throws when no binary is installed: a suite that
 * needs NATS must fail, not pass silently.
 */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const binary = findNatsServer();
  if (!binary) {
    throw new Error('nats-server was not found on PATH (install it: apt-get install -y nats-server, or set NATS_SERVER_BIN)');
  }
  const port = options.port ?? (await freePort());
  const storeDir = options.storeDir ?? (await mkdtemp(join(tmpdir(), 'feedmill-nats-')));
  const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir];
  const limits = [
    ...(options.maxPayload !== undefined ? [`max_payload: ${options.maxPayload}`] : []),
    // Only a config file sets JetStream's limits; the flags above still give the rest.
    ...(options.maxFileStore !== undefined ? [`jetstream {\n  max_file_store: ${options.maxFileStore}\n}`] : []),
  ];
  if (limits.length > 0) {
    const config = join(storeDir, 'limits.conf');
    await writeFile(config, `${limits.join('\n')}\n`);
    args.push('-c', config);
  }
  const child = spawn(binary, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await waitForReady(child, port);
  const signal = async (sig: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(sig);
      await exited;
    }
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    async stop() {
      // A paused server takes SIGTERM only once it runs again.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGCONT');
      await signal('SIGTERM');
      if (!options.storeDir) await rm(storeDir, { recursive: true, force: true });
    },
    kill: () => signal('SIGKILL'),
    pause: async () => {
      child.kill('SIGSTOP');
      await untilStopped(child.pid!);
    },
    resume: () => void child.kill('SIGCONT'),
  };
}

/** Waits until every thread of the process is stopped (state `T` in /proc), 2 s at most; where there is no /proc, a moment. */
async function untilStopped(pid: number): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (Date.now() < deadline) {
    let states: string[];
    try {
      const tasks = await readdir(`/proc/${pid}/task`);
      states = await Promise.all(tasks.map(async (task) => (await readFile(`/proc/${pid}/task/${task}/stat`, 'utf8')).replace(/^.*\) /s, '')[0]!));
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return;
    }
    if (states.every((state) => state === 'T' || state === 't')) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
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

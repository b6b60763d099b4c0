import WebSocket from 'ws';

/** What the server's own runtime says, read through its inspector. */
export interface RuntimeSample {
  rssBytes: number;
  /** V8 heap in use right after a full collection: what is retained. */
  heapAfterGcBytes: number;
  /** Event-loop delay since the last sample (ms), from `monitorEventLoopDelay` in the server. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

/**
 * Reads memory and event-loop delay from inside a Node process started with
 * `--inspect=127.0.0.1:0`, over the Chrome DevTools protocol: a full collection before
 * each heap reading, so that a rising heap is retained memory, not garbage not yet
 * collected. The server needs no endpoint for it (`/metrics` comes later).
 */
export class InspectorProbe {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
      const waiting = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id!);
      if (message.error) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
    });
  }

  /** Connects to the inspector whose `ws://` address the process printed, and starts the event-loop monitor in it. */
  static async attach(processOutput: string): Promise<InspectorProbe> {
    const url = /Debugger listening on (ws:\/\/\S+)/.exec(processOutput)?.[1];
    if (!url) throw new Error('the server printed no inspector address: start it with NODE_OPTIONS=--inspect=127.0.0.1:0');
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
    const probe = new InspectorProbe(socket);
    await probe.evaluate(`(() => {
      const { monitorEventLoopDelay } = process.getBuiltinModule('node:perf_hooks');
      globalThis.__soakLoopDelay = monitorEventLoopDelay({ resolution: 10 });
      globalThis.__soakLoopDelay.enable();
      return true;
    })()`);
    return probe;
  }

  async sample(): Promise<RuntimeSample> {
    await this.call('HeapProfiler.collectGarbage');
    const json = await this.evaluate(`(() => {
      const memory = process.memoryUsage();
      const delay = globalThis.__soakLoopDelay;
      const sample = { rssBytes: memory.rss, heapAfterGcBytes: memory.heapUsed, loopDelayP99Ms: delay.percentile(99) / 1e6, loopDelayMaxMs: delay.max / 1e6 };
      delay.reset();
      return JSON.stringify(sample);
    })()`);
    return JSON.parse(json as string) as RuntimeSample;
  }

  close(): void {
    this.socket.close();
  }

  private async evaluate(expression: string): Promise<unknown> {
    const result = (await this.call('Runtime.evaluate', { expression, returnByValue: true })) as { result: { value: unknown }; exceptionDetails?: { text: string } };
    if (result.exceptionDetails) throw new Error(`the server could not evaluate the probe: ${result.exceptionDetails.text}`);
    return result.result.value;
  }

  private call(method: string, params: object = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }
}

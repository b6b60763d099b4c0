import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpLoadResult, PlannedRequest } from './http-load.js';
import type { LatencyRecord, LatencySummary } from './latency.js';
import { say } from './progress.js';

/**
 * wrk's part: each thread takes every n-th request of the file from its own offset, cycling,
 * and counts its successes and failures, and its successes per second. With a quota it
 * sends exactly that many requests: each connection takes a place before it sends (`delay`,
 * which wrk asks before every request), and once the quota's places are taken the others
 * wait out the run instead of sending. It stops once every request it sent is answered, and
 * says so, for the caller to end the run (wrk itself would sleep out its duration). So no
 * request is still on its way when the run ends: a post sent after the quota would reach
 * the log after the caller took the log's head as the run's end. Latency percentiles come
 * from wrk's own histogram, of every answer.
 */
const SCRIPT = `
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("index", #threads - 1)
end

function init(args)
  local count, quota = tonumber(os.getenv("WRK_THREADS")), tonumber(os.getenv("WRK_QUOTA") or "0")
  requests, placed, sent, ok, failed, perSecond = {}, 0, 0, 0, 0, {}
  myQuota = quota > 0 and math.floor(quota / count) + ((index < quota % count) and 1 or 0) or 0
  local n = 0
  for line in io.lines(os.getenv("WRK_REQUESTS")) do
    if n % count == index then
      local method, path, body = line:match("^([^\t]*)\t([^\t]*)\t?(.*)$")
      requests[#requests + 1] = body ~= "" and wrk.format(method, path, { ["content-type"] = "application/json" }, body) or wrk.format(method, path)
    end
    n = n + 1
  end
end

-- Asked before each request of a connection: a place under the quota now, or a wait past the run's end.
function delay()
  if myQuota == 0 then return 0 end
  if placed >= myQuota then return 3600000 end
  placed = placed + 1
  return 0
end

function request()
  sent = sent + 1
  return requests[(sent - 1) % #requests + 1]
end

function response(status)
  if status >= 200 and status < 300 then
    ok = ok + 1
    local second = os.time()
    perSecond[second] = (perSecond[second] or 0) + 1
  else
    failed = failed + 1
  end
  if myQuota > 0 and ok + failed == myQuota then
    io.write("WRK-THREAD-DONE\\n")
    io.flush()
    wrk.thread:stop()
  end
end

function done(summary, latency)
  local okAll, failedAll, seconds = 0, 0, {}
  for _, thread in ipairs(threads) do
    okAll = okAll + thread:get("ok")
    failedAll = failedAll + thread:get("failed")
    for second, n in pairs(thread:get("perSecond")) do seconds[second] = (seconds[second] or 0) + n end
  end
  local perSecond = {}
  for second, n in pairs(seconds) do perSecond[#perSecond + 1] = string.format('"%d":%d', second, n) end
  local quantiles = {}
  for i = 1, 999 do quantiles[i] = latency:percentile(i / 10) end
  local e = summary.errors
  io.write(string.format('WRK-RESULT {"durationUs":%d,"ok":%d,"failed":%d,"socketErrors":%d,"perSecond":{%s},"meanUs":%f,"maxUs":%d,"quantilesUs":[%s]}\\n',
    summary.duration, okAll, failedAll, e.connect + e.read + e.write + e.timeout, table.concat(perSecond, ","),
    latency.mean, latency.max, table.concat(quantiles, ",")))
end
`;

interface WrkOutput {
  durationUs: number;
  ok: number;
  failed: number;
  socketErrors: number;
  /** Successes per wall-clock second (Unix time). */
  perSecond: Record<string, number>;
  meanUs: number;
  maxUs: number;
  /** The latency at 0.1 %, 0.2 %, ... 99.9 % of all requests. */
  quantilesUs: number[];
}

/**
 * A run's latencies as wrk's histogram gives them, of every request of the run (one kind:
 * a phase that mixes kinds runs one wrk per kind at once).
 */
class WrkLatencies implements LatencyRecord {
  constructor(
    readonly count: number,
    private readonly output: WrkOutput,
  ) {}

  summary(): LatencySummary {
    const q = this.output.quantilesUs;
    const ms = (us: number) => Math.round(us) / 1000;
    return { count: this.count, mean: ms(this.output.meanUs), p50: ms(q[499]!), p95: ms(q[949]!), p99: ms(q[989]!), max: ms(this.output.maxUs) };
  }

  /** The distribution as its 999 quantiles: what the charts draw from. */
  samples(): number[] {
    return this.output.quantilesUs.map((us) => us / 1000);
  }
}

let wrkPath: string | null | undefined;

/**
 * The wrk binary, installed with apt-get when missing and this user is root; null when it
 * cannot be had (the benchmark then drives HTTP with autocannon, and says so).
 */
export function findWrk(): string | null {
  if (wrkPath !== undefined) return wrkPath;
  const works = (candidate: string) => spawnSync(candidate, ['--version']).error === undefined;
  if (!works('wrk') && process.getuid?.() === 0) {
    say('installing wrk (apt-get install -y wrk)');
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    spawnSync('apt-get', ['install', '-y', '-qq', 'wrk'], { stdio: 'inherit' });
  }
  wrkPath = works('wrk') ? 'wrk' : null;
  return wrkPath;
}

/** Threads of wrk: one leaves the system under test the rest of this machine. */
const WRK_THREADS = 1;

/**
 * Drives the gateway with wrk, a load generator in C that leaves the server nearly all of
 * the machine: `requests` in order, cycled, on `connections` connections, for `seconds` or
 * until `amount` were answered. Every request of one run must be of one kind, since wrk
 * measures latency over the whole run.
 */
export async function runWrkLoad(options: { wrk: string; baseUrl: string; connections: number; requests: readonly PlannedRequest[]; seconds?: number; amount?: number }): Promise<HttpLoadResult> {
  const kinds = new Set(options.requests.map((r) => r.kind));
  if (kinds.size !== 1) throw new Error(`one wrk run measures one kind of request, not ${[...kinds].join(', ')}`);
  const dir = await mkdtemp(join(tmpdir(), 'feedmill-wrk-'));
  try {
    const requestsFile = join(dir, 'requests.tsv');
    const scriptFile = join(dir, 'requests.lua');
    const lines = options.requests.map((r) => [r.method, r.path, r.body === undefined ? '' : JSON.stringify(r.body)].join('\t'));
    await writeFile(requestsFile, `${lines.join('\n')}\n`);
    await writeFile(scriptFile, SCRIPT);
    const threads = Math.min(WRK_THREADS, options.connections);
    const seconds = options.seconds ?? 3600;
    const child = spawn(options.wrk, [`-t${threads}`, `-c${options.connections}`, `-d${seconds}s`, '--timeout', '30s', '-s', scriptFile, options.baseUrl], {
      env: { ...process.env, WRK_REQUESTS: requestsFile, WRK_THREADS: String(threads), WRK_QUOTA: String(options.amount ?? 0) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const threadsDone = stdout.split('WRK-THREAD-DONE').length - 1;
      // wrk sleeps out its duration even when every thread stopped; SIGINT makes it report now.
      if (threadsDone === threads && options.amount !== undefined) child.kill('SIGINT');
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.once('close', done));
    const line = stdout.split('\n').find((l) => l.startsWith('WRK-RESULT '));
    if (!line) throw new Error(`wrk ended (${code}) without a result: ${stderr || stdout}`.slice(0, 2000));
    return resultOf([...kinds][0]!, JSON.parse(line.slice('WRK-RESULT '.length)) as WrkOutput);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function resultOf(kind: string, output: WrkOutput): HttpLoadResult {
  const byKind: HttpLoadResult['byKind'] = { [kind]: { ok: output.ok, failed: output.failed, latency: new WrkLatencies(output.ok, output) } };
  const wallSeconds = Object.keys(output.perSecond).map(Number).sort((a, b) => a - b);
  const first = wallSeconds[0] ?? 0;
  const perSecond: Array<Record<string, number>> = [];
  for (const second of wallSeconds) perSecond[second - first] = { [kind]: output.perSecond[String(second)]! };
  for (let i = 0; i < perSecond.length; i++) perSecond[i] ??= {};
  // The first and last wall-clock seconds are only partly covered: left in, they would read as drops.
  return { seconds: output.durationUs / 1e6, byKind, perSecond: perSecond.slice(1, -1), errors: output.socketErrors };
}

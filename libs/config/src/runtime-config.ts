import { z } from 'zod';
import { MAX_TIMELINE_PARTITIONS } from '@feedmill/contracts';

/**
 * Every environment variable feedmill reads, with its default. Validated once at start;
 * a bad value stops the process with a message that names the variable.
 */
export const runtimeConfigSchema = z.object({
  /** HTTP port of the gateway (or the standalone process). */
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  /**
   * Standalone only: processes that answer HTTP in front of the one holding the log, the
   * stores and the services (`node:cluster` workers), so that HTTP parsing and writing use
   * other cores than the services. 0 (the default) answers HTTP in the services' own
   * process: on two cores that takes more posts than workers do (see the README's
   * Performance section); workers, with their copies of the timelines, serve more reads and
   * are for read-heavy deployments with cores to spare.
   */
  HTTP_WORKERS: z.coerce.number().int().min(0).max(64).default(0),
  /**
   * Standalone with `HTTP_WORKERS`, memory stores, one timeline partition: where the workers
   * read `ring` and bucketed timelines. `copy`: each worker holds a copy of the timelines,
   * kept by the services' process, and reads its own (a follow or unfollow answers once
   * every copy has it). `services`: every read is a call to the services' process.
   */
  HTTP_WORKER_READS: z.enum(['copy', 'services']).default('copy'),
  /**
   * Services (content, graph, timeline, fan-out) only: an HTTP port answering `/healthz`
   * (the process runs) and `/readyz` (200 once the service has caught up with the log, 503
   * before that and from the moment it starts to stop), for Kubernetes probes. Unset, the
   * service opens no HTTP port.
   */
  STATUS_PORT: z.coerce.number().int().min(1).max(65_535).optional(),
  /**
   * Services only: on SIGTERM a service stops taking requests (it drains its NATS
   * subscriptions) and gives the requests it holds up to this long to finish and answer,
   * less when they finish sooner, before it closes its log and stores.
   */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(2_000),
  /** Directory of the file log. */
  FEEDMILL_DATA_DIR: z.string().min(1).default('./data'),
  /** Path of a JSON feed-group config; the built-in default has `user` and `timeline`. */
  FEED_CONFIG: z.string().min(1).optional(),
  /** Which event log to use: `file` (standalone default), `jetstream` (cluster default) or `kurrentdb`. */
  LOG: z.enum(['file', 'jetstream', 'kurrentdb']).optional(),
  /** Where projections live: `memory` (rebuilt from the log at start) or `mongodb`. */
  STORE: z.enum(['memory', 'mongodb']).default('memory'),
  MONGODB_URL: z.string().min(1).optional(),
  MONGODB_DB: z.string().regex(/^[A-Za-z0-9_-]{1,63}$/).default('feedmill'),
  /** KurrentDB/EventStoreDB connection string, for `LOG=kurrentdb`. */
  KURRENTDB_URL: z.string().min(1).optional(),
  /** Prefix of every KurrentDB stream this deployment writes and reads, so that several share one database. */
  KURRENTDB_NAMESPACE: z.string().regex(/^[A-Za-z0-9_-]{0,63}$/).default(''),
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  /** JetStream stream holding the log. */
  JETSTREAM_STREAM: z.string().regex(/^[A-Za-z0-9_-]+$/).default('FEEDMILL'),
  /**
   * Copies JetStream keeps of the log's stream (and its checkpoints) when the first process
   * creates it: 3 on a three-node NATS cluster, so that an acknowledged append survives the
   * loss of a node. An existing stream keeps the count it was made with.
   */
  JETSTREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /**
   * Largest request body the gateway accepts, in bytes, and so the largest activity. At most
   * 512 KiB, so that one activity always fits a NATS message (1 MiB by default) with room
   * for its delivery's readers.
   */
  BODY_LIMIT: z.coerce.number().int().min(1024).max(512 * 1024).default(64 * 1024),
  /**
   * Snapshots of the memory states (content, graph, the timelines, fan-out's follower index)
   * under `FEEDMILL_DATA_DIR/snapshots/` (file log with memory stores only): a start restores
   * the newest good one of each and replays only the tail.
   */
  SNAPSHOTS: z.enum(['on', 'off']).default('on'),
  /** Write a state's snapshot once this many events were applied since its last one. */
  SNAPSHOT_EVERY_EVENTS: z.coerce.number().int().min(1).default(100_000),
  /** Write a state's snapshot once this many seconds passed since its last one, if it changed. */
  SNAPSHOT_EVERY_SECONDS: z.coerce.number().min(0.1).default(60),
  /**
   * Cluster mode: a post, removal, bump or update by a feed with more followers than this
   * becomes chunk jobs (of up to 2,000 readers) on a JetStream work queue that every fan-out
   * process applies, when more than one runs; smaller ones the planning process delivers
   * itself.
   */
  FANOUT_JOB_MIN_READERS: z.coerce.number().int().min(0).default(5_000),
  /**
   * Cluster mode: how long a fan-out process holds a chunk job without renewing its lease
   * before the job goes to another process (how long a dead process's job waits).
   */
  FANOUT_JOB_LEASE_MS: z.coerce.number().int().min(500).default(5_000),
  /**
   * Cluster mode: how long the jobs of a post may get no fewer before the planner takes them
   * back from the queue and delivers the post itself.
   */
  FANOUT_JOB_STALL_MS: z.coerce.number().int().min(1_000).default(60_000),
  /**
   * Cluster mode: how long the planner's lease lasts unless renewed (three times per lease):
   * how long fan-out waits for another process to plan after the planner dies.
   */
  FANOUT_PLANNER_LEASE_MS: z.coerce.number().int().min(500).default(3_000),
  /**
   * Cluster mode: timelines split into this many partitions by a hash of the reader feed.
   * Each timeline process owns some of them and answers only their deliveries and reads; the
   * gateway and fan-out route by the same hash. Every process of a cluster must be given the
   * same value.
   */
  TIMELINE_PARTITIONS: z.coerce.number().int().min(1).max(MAX_TIMELINE_PARTITIONS).default(1),
  /**
   * Cluster mode with memory stores: how many timeline processes share the partitions. Each
   * owns at most ceil(TIMELINE_PARTITIONS / TIMELINE_REPLICAS) of them.
   */
  TIMELINE_REPLICAS: z.coerce.number().int().min(1).max(MAX_TIMELINE_PARTITIONS).default(1),
  /**
   * Cluster mode with memory stores: this timeline process's fixed place among the
   * TIMELINE_REPLICAS (0 to TIMELINE_REPLICAS - 1): it owns the partitions whose number
   * modulo TIMELINE_REPLICAS is this. Unset, processes claim partitions by leases in
   * JetStream KV instead, which is what a Kubernetes Deployment needs.
   */
  TIMELINE_REPLICA_INDEX: z.coerce.number().int().min(0).optional(),
  /**
   * Cluster mode: how long a timeline process's claim on a partition lasts unless renewed
   * (three times per lease): how long a dead process's partitions wait for another owner.
   */
  TIMELINE_PARTITION_LEASE_MS: z.coerce.number().int().min(500).default(3_000),
  LOG_LEVEL: z.enum(['error', 'warn', 'log', 'debug', 'verbose']).default('log'),
  /**
   * Whether a request's id follows it into the services' log lines: `auto` does where the
   * runtime carries async context cheaply (Node 24 and later), `on` and `off` always and never.
   */
  REQUEST_IDS: z.enum(['auto', 'on', 'off']).default('auto'),
  /**
   * When set, every `/v1` request needs `Authorization: Bearer <JWT>` signed with this
   * secret (HS256). Unset (and no public key), the API is open to whoever reaches the port.
   */
  FEEDMILL_JWT_SECRET: z.string().min(16, 'use a secret of at least 16 characters').optional(),
  /**
   * A PEM public key (SPKI, RSA or EC P-256) whose tokens are accepted too (RS256, ES256): for
   * deployments whose identity provider signs. `\n` in the value stands for a line break.
   */
  FEEDMILL_JWT_PUBLIC_KEY: z.string().min(1).optional(),
  /**
   * When set, a token's `iss` and `aud` must match: an identity provider's key signs tokens
   * for other applications too, and those must not become feedmill users.
   */
  FEEDMILL_JWT_ISSUER: z.string().min(1).optional(),
  FEEDMILL_JWT_AUDIENCE: z.string().min(1).optional(),
  /**
   * Requests to `/v1` each caller may send per minute: a user (a token's `sub`), an admin
   * token, or an address when tokens are off. Past it the gateway answers `429
   * rate_limited` with `Retry-After`. 0 (the default) sets no limit. Counted per gateway
   * process.
   */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  /**
   * Realtime streams (`GET /v1/feeds/{group}/{id}/stream`): how long, in seconds, a feed whose
   * last stream closed keeps being followed (tier 2), so that a client that reconnects within
   * it gets what it missed rather than a reset. 0 lets go at once.
   */
  REALTIME_GRACE_SECONDS: z.coerce.number().min(0).max(86_400).default(300),
  /** How many of each streamed feed's newest events are kept for `Last-Event-ID` resumes. */
  REALTIME_RING: z.coerce.number().int().min(1).max(10_000).default(256),
  /** Seconds between heartbeat comments on an idle stream, so that proxies keep it open. */
  REALTIME_HEARTBEAT_SECONDS: z.coerce.number().min(0.05).max(3_600).default(15),
  /**
   * Cluster mode: how long, in seconds, a gateway's watch of a streamed feed lasts unless
   * renewed (gateways renew three times per lease): how long a gateway that died keeps a feed
   * in tier 1, and how soon a restarted timeline process learns of the streams open on it.
   */
  REALTIME_LEASE_SECONDS: z.coerce.number().min(0.3).max(3_600).default(30),
  /** How many entries of a streamed feed's first page the stream reports changes of. */
  REALTIME_PAGE_SIZE: z.coerce.number().int().min(1).max(100).default(25),
});

export type RuntimeConfig = z.output<typeof runtimeConfigSchema>;

/** Checks between variables: a log that needs a URL gets one. */
const completeConfigSchema = runtimeConfigSchema
  .refine((config) => config.LOG !== 'kurrentdb' || config.KURRENTDB_URL !== undefined, {
    message: 'LOG=kurrentdb needs KURRENTDB_URL (for example kurrentdb://127.0.0.1:2113?tls=false)',
    path: ['KURRENTDB_URL'],
  })
  .refine((config) => config.TIMELINE_REPLICA_INDEX === undefined || config.TIMELINE_REPLICA_INDEX < config.TIMELINE_REPLICAS, {
    message: 'TIMELINE_REPLICA_INDEX must be below TIMELINE_REPLICAS (from 0 to TIMELINE_REPLICAS - 1)',
    path: ['TIMELINE_REPLICA_INDEX'],
  })
  .refine((config) => config.TIMELINE_REPLICA_INDEX === undefined || config.TIMELINE_REPLICA_INDEX < config.TIMELINE_PARTITIONS, {
    message: 'a replica whose index is not below TIMELINE_PARTITIONS owns no partition: run at most TIMELINE_PARTITIONS timeline replicas',
    path: ['TIMELINE_REPLICA_INDEX'],
  })
  .refine((config) => config.STORE !== 'mongodb' || config.MONGODB_URL !== undefined, {
    message: 'STORE=mongodb needs MONGODB_URL (for example mongodb://127.0.0.1:27017)',
    path: ['MONGODB_URL'],
  });

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadRuntimeConfig(env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
  const parsed = completeConfigSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  throw new ConfigError(`invalid environment: ${problems.join('; ')}`);
}

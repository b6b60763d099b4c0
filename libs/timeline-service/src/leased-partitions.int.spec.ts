import { connect, type NatsConnection } from '@nats-io/transport-node';
import { KvLeaseBoard } from '@feedmill/fanout-cluster';
import { startNatsServer, waitFor, type NatsServerHandle } from '@feedmill/harness';
import { LeasedPartitions } from './leased-partitions.js';

/**
 * Timeline processes claiming four partitions by leases in JetStream KV, on a real
 * nats-server: two share them two and two; when one dies (its connection gone, its leases
 * left to run out) the other takes its partitions; a third that joins gets its share back.
 */
const LEASE_MS = 600;
let nats: NatsServerHandle;
const connections: NatsConnection[] = [];
const owners: LeasedPartitions[] = [];
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await Promise.all(owners.map((owner) => owner.stop()));
  await Promise.all(connections.map((connection) => connection.close()));
  await nats?.stop();
});

/** A process's claims: what it was told to take and release, as a set it holds. */
async function claimant(): Promise<{ owner: LeasedPartitions; holds: Set<number>; connection: NatsConnection }> {
  const connection = await connect({ servers: nats.url });
  connections.push(connection);
  const board = await KvLeaseBoard.open(connection, 'TEST_timeline_partitions', LEASE_MS);
  const owner = new LeasedPartitions(board, { partitions: 4, replicas: 2, leaseMs: LEASE_MS, warn: () => undefined });
  owners.push(owner);
  const holds = new Set<number>();
  owner.start({ take: async (partition) => void holds.add(partition), release: async (partition) => void holds.delete(partition) });
  return { owner, holds, connection };
}

const sorted = (holds: Set<number>) => [...holds].sort((a, b) => a - b);

it('shares the partitions by leases, moves a dead process’s to the living, and gives a newcomer its share', async () => {
  const a = await claimant();
  const b = await claimant();
  await waitFor(async () => (a.holds.size === 2 && b.holds.size === 2 ? true : undefined), { timeoutMs: 10_000, what: 'two partitions each' });
  expect(sorted(new Set([...a.holds, ...b.holds]))).toEqual([0, 1, 2, 3]);
  expect(sorted(a.holds)).toEqual(a.owner.held());

  // a dies: nothing renews its leases any more, and nothing gives them up.
  await a.connection.close();
  await waitFor(async () => (b.holds.size === 4 ? true : undefined), { timeoutMs: 10_000, what: 'the living process to take every partition' });

  const c = await claimant();
  await waitFor(async () => (b.holds.size === 2 && c.holds.size === 2 ? true : undefined), { timeoutMs: 10_000, what: 'the newcomer to get its share' });
  expect(sorted(new Set([...b.holds, ...c.holds]))).toEqual([0, 1, 2, 3]);
});

it('keeps every lease while it takes its partitions on, however long each take lasts', async () => {
  const connection = await connect({ servers: nats.url });
  connections.push(connection);
  const board = await KvLeaseBoard.open(connection, 'TEST_slow_takes', LEASE_MS);
  const warnings: string[] = [];
  const owner = new LeasedPartitions(board, { partitions: 3, replicas: 1, leaseMs: LEASE_MS, warn: (message) => warnings.push(message) });
  owners.push(owner);
  const holds = new Set<number>();
  // Each take lasts two and a half lease times, as loading a large partition's snapshot may.
  owner.start({ take: async (partition) => void (await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2.5)), holds.add(partition)), release: async (partition) => void holds.delete(partition) });
  await waitFor(async () => (holds.size === 3 ? true : undefined), { timeoutMs: 20_000, what: 'all three partitions taken' });
  await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2));
  expect(warnings).toEqual([]);
  expect(sorted(holds)).toEqual([0, 1, 2]);
  expect(owner.held()).toEqual([0, 1, 2]);
});

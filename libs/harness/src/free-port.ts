import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Where the kernel's ephemeral ports begin: it hands them to outgoing connections (every
 * NATS and HTTP client of a test), so a port taken from that range may be a client's by the
 * time a server listens on it (EADDRINUSE). Ports below it go only to those who ask by number.
 */
function ephemeralPortsStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low !== undefined && Number.isInteger(low) && low > 2048) return low;
  } catch {
    // Not Linux: the range IANA names, which most systems use.
  }
  return 49152;
}

const FIRST_PORT = 10_000;
const ATTEMPTS = 50;

/** Whether a server could listen on `port` (every address) a moment ago. */
function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port that was free a moment ago, drawn at random below the ephemeral range (where no
 * outgoing connection takes it meanwhile); the kernel's choice when none of the draws is free.
 */
export async function freePort(): Promise<number> {
  const end = ephemeralPortsStart();
  for (let attempt = 0; attempt < ATTEMPTS && end > FIRST_PORT; attempt++) {
    const port = FIRST_PORT + Math.floor(Math.random() * (end - FIRST_PORT));
    if (await listens(port)) return port;
  }
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '0.0.0.0', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

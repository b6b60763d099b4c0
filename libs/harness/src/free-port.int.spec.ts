import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort } from './free-port.js';

describe('freePort', () => {
  it('draws ports a server can listen on, below the range the kernel gives outgoing connections', async () => {
    const [ephemeralStart] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = await Promise.all(Array.from({ length: 5 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeLessThan(ephemeralStart!);
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '0.0.0.0', resolve));
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

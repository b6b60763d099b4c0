import type { ServiceStatus } from '@feedmill/contracts';
import { settledHead, startFailureReason } from './deployment.js';

describe('settledHead', () => {
  const at = (content: number, graph: number, fanout: number, logHead: number): ServiceStatus[] => [
    { service: 'content', ready: true, position: content },
    { service: 'graph', ready: true, position: graph },
    { service: 'fanout', ready: true, position: fanout, counters: { logHead, deadLettered: 0 } },
  ];

  it('is the log head once content, graph and fan-out have all reached it', () => {
    expect(settledHead(at(120, 120, 120, 120))).toBe(120);
  });

  it('is nothing while the services stand together behind the head', () => {
    expect(settledHead(at(100, 100, 100, 120))).toBeUndefined();
    expect(settledHead(at(120, 120, 100, 120))).toBeUndefined();
  });

  it('is nothing while fan-out names no head', () => {
    expect(settledHead([{ service: 'content', ready: true, position: 3 }, { service: 'graph', ready: true, position: 3 }, { service: 'fanout', ready: true, position: 3 }])).toBeUndefined();
  });
});

describe('startFailureReason', () => {
  it('is the line in which a process refused its configuration', () => {
    const error = new Error(
      [
        'timed out waiting for http://127.0.0.1:4000/readyz: standalone exited early',
        '--- standalone',
        '',
        'feedmill: FEED_CONFIG /tmp/feeds.json: groups.timeline.model: Invalid option: expected one of "ring"|"cache"|"pull"',
      ].join('\n'),
    );
    expect(startFailureReason(error)).toBe('feedmill: FEED_CONFIG /tmp/feeds.json: groups.timeline.model: Invalid option: expected one of "ring"|"cache"|"pull"');
  });

  it('is the first line of the error otherwise', () => {
    expect(startFailureReason(new Error('listen EADDRINUSE: address already in use\n--- standalone\nstack'))).toBe('listen EADDRINUSE: address already in use');
    expect(startFailureReason('not an error')).toBe('not an error');
  });
});

import { startFailureReason } from './deployment.js';

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

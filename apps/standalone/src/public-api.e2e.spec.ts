import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FeedmillApiError, FeedmillClient } from '@feedmill/client';
import { hs256Tokens, startStandalone, type Deployment } from '@feedmill/harness';
import { describePublicApi, RATE_LIMIT } from '@feedmill/testing';

const secret = 'public api secret of sixteen characters';

async function standalone(env: Record<string, string>): Promise<Deployment> {
  const dataDir = await mkdtemp(join(tmpdir(), 'feedmill-public-api-'));
  const deployment = await startStandalone({ dataDir, env });
  return {
    ...deployment,
    stop: async () => {
      await deployment.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

describePublicApi('standalone', () => standalone({ FEEDMILL_JWT_SECRET: secret, RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) }), hs256Tokens(secret));

describe('standalone without tokens: rate limits per address', () => {
  let deployment: Deployment;
  beforeAll(async () => {
    deployment = await standalone({ RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) });
  });
  afterAll(async () => {
    await deployment?.stop();
  });

  it('counts every request from one address against one allowance, whatever feed it names', async () => {
    const client = new FeedmillClient({ baseUrl: deployment.baseUrl });
    for (let i = 0; i < RATE_LIMIT; i++) await client.readFeed(`user:u${i}`);
    const limited = await client.readFeed('user:someone-else').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(limited).toBeInstanceOf(FeedmillApiError);
    // No token names the caller: the refusal names no field.
    expect((limited as FeedmillApiError).toBody()).toEqual({ code: 'rate_limited', message: expect.stringMatching(/from this address/) });
    expect((limited as FeedmillApiError).status).toBe(429);
    expect((limited as FeedmillApiError).retryAfterSeconds).toBeGreaterThan(0);
    // The router decodes a percent-encoded `/v1/`: such a path is the same route, and counted
    // (raw `fetch`: the client would never spell its paths this way).
    const encoded = await fetch(`${deployment.baseUrl}/%761/feeds/user/u0`);
    expect(encoded.status).toBe(429);
  });
});

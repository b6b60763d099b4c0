import { FeedmillClient } from '@feedmill/client';
import { refusal, type Deployment, type TokenFor } from '@feedmill/harness';

/** The requests each caller may send per minute in {@link describePublicApi}'s deployments. */
export const RATE_LIMIT = 5;

/**
 * The API's documentation and rate limits, on a deployment started with
 * `RATE_LIMIT_PER_MINUTE` = {@link RATE_LIMIT} and tokens signed by `tokenFor`: the same
 * scenarios for the standalone and the cluster, whose gateways are the same code.
 */
export function describePublicApi(name: string, start: () => Promise<Deployment>, tokenFor: TokenFor): void {
  describe(`${name}: documentation and rate limits`, () => {
    let deployment: Deployment;
    const as = (sub: string | undefined) => new FeedmillClient({ baseUrl: deployment.baseUrl, token: () => tokenFor(sub) });

    beforeAll(async () => {
      deployment = await start();
    });
    afterAll(async () => {
      await deployment?.stop();
    });

    it('serves the OpenAPI document and the reference page without a token', async () => {
      const anonymous = new FeedmillClient({ baseUrl: deployment.baseUrl });
      const document = await anonymous.openApiDocument();
      expect(document).toMatchObject({ openapi: '3.1.0', components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } } });
      expect(Object.keys(document['paths'] as object)).toEqual(expect.arrayContaining(['/v1/feeds/{group}/{id}', '/v1/follows', '/v1/admin/deadletters']));
      const page = await anonymous.send<string>({ method: 'GET', path: '/docs' });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.body).toContain('<article id="readFeed">');
      expect(page.body).not.toMatch(/<script|<link|src=/);
    });

    it('answers a user past its allowance 429 rate_limited with Retry-After, every token of that user alike, and no one else', async () => {
      const alice = as('alice');
      for (let i = 0; i < RATE_LIMIT; i++) await alice.readFeed('timeline:alice');
      const limited = await refusal(alice.addActivity('user:alice', { actor: 'alice', verb: 'post', object: 'one too many' }));
      expect(limited).toMatchObject({ status: 429, code: 'rate_limited', field: 'authorization' });
      expect(limited.message).toMatch(/requests a minute from user "alice"/);
      expect(limited.retryAfterSeconds).toBeGreaterThan(0);
      expect(limited.retryAfterSeconds).toBeLessThanOrEqual(60);
      // A second token of the same user shares the allowance (tokens differ by their issue time).
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await refusal(as('alice').readFeed('timeline:alice'))).toMatchObject({ status: 429, code: 'rate_limited' });
      // Nothing of the refused post was written: bob's allowance reads alice's feed.
      expect((await as('bob').readFeed('user:alice')).items).toEqual([]);
      // An admin token is a caller of its own.
      expect(await as(undefined).deadLetters()).toEqual({ items: [] });
    });

    it('counts an admin token against one allowance however its header spells Bearer, and another admin token against its own, sent as a stream’s access_token too', async () => {
      // Tokens differ by their issue time, in seconds: these two are new.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const first = await tokenFor(undefined);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const second = await tokenFor(undefined);
      const spellings = [`Bearer ${first}`, `bearer ${first}`, `BEARER  ${first}`, `Bearer   ${first}`];
      const statuses: number[] = [];
      for (let i = 0; i <= RATE_LIMIT; i++) {
        const answer = await fetch(`${deployment.baseUrl}/v1/feeds/user/dora/counts`, { headers: { authorization: spellings[i % spellings.length]! } });
        statuses.push(answer.status);
      }
      expect(statuses).toEqual([...Array.from({ length: RATE_LIMIT }, () => 200), 429]);
      const stream = await fetch(`${deployment.baseUrl}/v1/feeds/user/dora/stream?access_token=${second}`);
      expect(stream.status).toBe(200);
      await stream.body?.cancel();
    });

    it('never limits health, readiness or the documentation', async () => {
      const carol = as('carol');
      for (let i = 0; i < RATE_LIMIT; i++) await carol.counts('user:carol');
      expect(await refusal(carol.counts('user:carol'))).toMatchObject({ status: 429 });
      for (let i = 0; i < RATE_LIMIT * 2; i++) {
        expect(await carol.alive()).toBe(true);
        expect((await carol.readiness()).ready).toBe(true);
        expect((await carol.send({ method: 'GET', path: '/openapi.json' })).status).toBe(200);
        expect((await carol.send({ method: 'GET', path: '/docs' })).status).toBe(200);
      }
    });
  });
}

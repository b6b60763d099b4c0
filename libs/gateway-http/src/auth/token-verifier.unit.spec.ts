import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { FeedmillError } from '@feedmill/contracts';
import { owns, requireAdmin, requireOwner, OPEN_ACCESS } from './caller.js';
import { TokenVerifier } from './token-verifier.js';

const secret = 'a secret of more than sixteen characters';
const hs256 = (claims: JWTPayload, key = secret) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(key));
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The code, field and message a call was refused with. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; field?: string; message: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof FeedmillError) return error.toBody() as never;
    throw error;
  }
  throw new Error('the call was not refused');
}

describe('TokenVerifier', () => {
  const verifier = new TokenVerifier({ secret });

  it('takes the user from `sub`, and `"admin": true` as a trusted backend', async () => {
    expect(await verifier.callerOf(`Bearer ${await hs256({ sub: 'alice' })}`)).toMatchObject({ sub: 'alice', admin: false });
    expect(await verifier.callerOf(`bearer ${await hs256({ admin: true })}`)).toMatchObject({ sub: undefined, admin: true });
  });

  it('gives a caller its token’s expiry and one digest of the token however the header spells Bearer', async () => {
    const exp = Math.floor(Date.now() / 1000) + 60;
    const token = await hs256({ admin: true, exp });
    const callers = await Promise.all([`Bearer ${token}`, `bearer ${token}`, `BEARER   ${token}`].map((header) => verifier.callerOf(header)));
    expect(new Set(callers.map((caller) => caller.tokenDigest)).size).toBe(1);
    expect(callers[0]!.tokenDigest).toEqual(expect.any(String));
    expect(callers[0]!.tokenDigest).not.toContain(token);
    expect(callers.map((caller) => caller.expiresAtMs)).toEqual([exp * 1000, exp * 1000, exp * 1000]);
    const other = await verifier.callerOf(`Bearer ${await hs256({ admin: true, exp: exp + 1 })}`);
    expect(other.tokenDigest).not.toBe(callers[0]!.tokenDigest);
  });

  it.each<[string, () => Promise<string | undefined>, RegExp]>([
    ['no header', async () => undefined, /Bearer <token>/],
    ['another scheme', async () => 'Basic YWxpY2U6c2VjcmV0', /must be "Bearer <token>"/],
    ['a malformed token', async () => 'Bearer not.a.token', /not a valid JWT/],
    ['another secret', async () => `Bearer ${await hs256({ sub: 'alice' }, 'another secret of sixteen chars')}`, /signature does not verify/],
    ['an expired token', async () => `Bearer ${await hs256({ sub: 'alice', exp: nowSeconds() - 10 })}`, /expired/],
    ['an unsigned token', async () => `Bearer ${new UnsecuredJWT({ sub: 'alice', admin: true }).encode()}`, /algorithm not accepted|not a valid JWT/],
    ['a token that names no user', async () => `Bearer ${await hs256({ scope: 'x' })}`, /needs a "sub" claim/],
  ])('refuses %s with 401 unauthorized naming the header', async (_what, header, message) => {
    const refused = await refusal(verifier.callerOf(await header()));
    expect(refused).toMatchObject({ code: 'unauthorized', field: 'authorization' });
    expect(refused.message).toMatch(message);
  });

  it('honours `exp` for a token it has verified before', async () => {
    const token = await hs256({ sub: 'alice', exp: nowSeconds() + 60 });
    expect((await verifier.callerOf(`Bearer ${token}`)).sub).toBe('alice');
    expect((await refusal(verifier.callerOf(`Bearer ${token}`, Date.now() + 61_000))).message).toMatch(/expired/);
  });

  it.each([
    ['RS256', () => generateKeyPairSync('rsa', { modulusLength: 2048 })],
    ['ES256', () => generateKeyPairSync('ec', { namedCurve: 'P-256' })],
  ] as const)('accepts %s tokens from a public key, besides the secret, and refuses them signed by another key', async (alg, pair) => {
    const { publicKey, privateKey } = pair();
    const other = pair();
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    // As an environment variable would often carry it: on one line.
    const both = new TokenVerifier({ secret, publicKey: pem.replace(/\n/g, '\\n') });
    const signed = await new SignJWT({ sub: 'bob' }).setProtectedHeader({ alg }).sign(privateKey);
    expect(await both.callerOf(`Bearer ${signed}`)).toMatchObject({ sub: 'bob', admin: false });
    expect(await both.callerOf(`Bearer ${await hs256({ sub: 'carol' })}`)).toMatchObject({ sub: 'carol', admin: false });
    const forged = await new SignJWT({ sub: 'bob' }).setProtectedHeader({ alg }).sign(other.privateKey);
    expect((await refusal(both.callerOf(`Bearer ${forged}`))).message).toMatch(/signature does not verify/);
    // A key of the public kind is never taken as the shared secret, nor the other way round.
    expect((await refusal(new TokenVerifier({ publicKey: pem }).callerOf(`Bearer ${await hs256({ sub: 'bob' })}`))).message).toMatch(/algorithm not accepted/);
  });

  it('takes only tokens for this issuer and audience when they are configured', async () => {
    const strict = new TokenVerifier({ secret, issuer: 'https://id.example', audience: 'feedmill' });
    const forUs = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256' }).setIssuer('https://id.example').setAudience('feedmill').sign(new TextEncoder().encode(secret));
    const forOthers = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256' }).setIssuer('https://id.example').setAudience('another-app').sign(new TextEncoder().encode(secret));
    expect((await strict.callerOf(`Bearer ${forUs}`)).sub).toBe('alice');
    expect(await refusal(strict.callerOf(`Bearer ${forOthers}`))).toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/"aud" claim/) });
    expect((await refusal(strict.callerOf(`Bearer ${await hs256({ sub: 'alice' })}`))).message).toMatch(/"iss" claim/);
  });

  it('is off without a key', () => {
    expect(TokenVerifier.fromConfig({})).toBeUndefined();
    expect(TokenVerifier.fromConfig({ secret })).toBeInstanceOf(TokenVerifier);
  });
});

describe('ownership', () => {
  const alice = { sub: 'alice', admin: false };

  it('gives a user every feed whose id is its own, in any group, and an admin every feed', () => {
    expect(owns(alice, 'user:alice')).toBe(true);
    expect(owns(alice, 'timeline:alice')).toBe(true);
    expect(owns(alice, 'user:alice2')).toBe(false);
    expect(owns(alice, 'user:bob')).toBe(false);
    expect(owns({ sub: undefined, admin: true }, 'user:bob')).toBe(true);
    expect(owns(OPEN_ACCESS, 'timeline:anyone')).toBe(true);
  });

  it('refuses with 403 forbidden, naming the field', () => {
    expect(() => requireOwner(alice, 'user:bob', 'post to')).toThrow(new FeedmillError('forbidden', 'user "alice" may not post to user:bob: a user owns only the feeds whose id is its own', 'id'));
    expect(() => requireAdmin(alice, 'replay dead letters')).toThrow(expect.objectContaining({ code: 'forbidden', field: 'authorization' }));
  });
});

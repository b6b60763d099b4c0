import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { FeedmillError } from '@feedmill/contracts';
import type { Caller } from './caller.js';

/** Where tokens come from: a shared secret (HS256) and/or an identity provider's public key (RS256, ES256). */
export interface TokenKeys {
  secret?: string;
  /** PEM (SPKI) of an RSA or EC P-256 public key. */
  publicKey?: string;
  /** The `iss` and `aud` a token must carry, when given. */
  issuer?: string;
  audience?: string;
}

/** Verified tokens kept, so that a client's every request does not verify its signature again. */
const REMEMBERED_TOKENS = 10_000;

/**
 * Turns an `Authorization: Bearer <JWT>` header into a {@link Caller}, or throws
 * `unauthorized` (missing, malformed, badly signed or expired). A token's `exp` is honoured
 * whenever it is used, including from the memory of tokens already verified.
 */
export class TokenVerifier {
  private readonly algorithms: string[];
  private readonly keyFor: JWTVerifyGetKey;
  private readonly verified = new Map<string, { caller: Caller; expiresAtMs: number }>();
  private readonly expected: { issuer?: string; audience?: string };

  constructor(keys: TokenKeys) {
    this.expected = { ...(keys.issuer !== undefined && { issuer: keys.issuer }), ...(keys.audience !== undefined && { audience: keys.audience }) };
    const secret = keys.secret === undefined ? undefined : new TextEncoder().encode(keys.secret);
    const publicKey = keys.publicKey === undefined ? undefined : readPublicKey(keys.publicKey);
    this.algorithms = [...(secret ? ['HS256'] : []), ...(publicKey ? [publicKey.algorithm] : [])];
    if (this.algorithms.length === 0) throw new Error('a token verifier needs a secret or a public key');
    // The algorithms allowed pick the key: a token signed with one kind never meets the other.
    this.keyFor = (header) => (header.alg === 'HS256' ? secret! : publicKey!.key);
  }

  /** Whether tokens are checked at all: with no key configured the API is open. */
  static fromConfig(keys: TokenKeys): TokenVerifier | undefined {
    return keys.secret === undefined && keys.publicKey === undefined ? undefined : new TokenVerifier(keys);
  }

  async callerOf(authorization: string | undefined, nowMs = Date.now()): Promise<Caller> {
    const token = bearerToken(authorization);
    const remembered = this.verified.get(token);
    if (remembered) {
      if (remembered.expiresAtMs > nowMs) return remembered.caller;
      this.verified.delete(token);
      throw new FeedmillError('unauthorized', 'the token has expired', 'authorization');
    }
    const payload = await this.verify(token, nowMs);
    const expiresAtMs = payload.exp === undefined ? Infinity : payload.exp * 1000;
    const caller: Caller = { ...callerOfClaims(payload), tokenDigest: createHash('sha256').update(token).digest('base64url'), ...(payload.exp !== undefined && { expiresAtMs }) };
    if (this.verified.size >= REMEMBERED_TOKENS) this.verified.clear();
    this.verified.set(token, { caller, expiresAtMs });
    return caller;
  }

  private async verify(token: string, nowMs: number): Promise<JWTPayload> {
    try {
      return (await jwtVerify(token, this.keyFor, { algorithms: this.algorithms, currentDate: new Date(nowMs), ...this.expected })).payload;
    } catch (error) {
      throw new FeedmillError('unauthorized', reasonOf(error, this.algorithms), 'authorization');
    }
  }
}

function bearerToken(authorization: string | undefined): string {
  if (authorization === undefined || authorization === '') throw new FeedmillError('unauthorized', 'send Authorization: Bearer <token>', 'authorization');
  const match = /^Bearer +([A-Za-z0-9_\-.]+)$/i.exec(authorization);
  if (!match) throw new FeedmillError('unauthorized', 'the Authorization header must be "Bearer <token>"', 'authorization');
  return match[1]!;
}

/** `sub` names the user; `"admin": true` makes a trusted backend, which may have no `sub`. */
function callerOfClaims(payload: JWTPayload): Caller {
  const admin = payload['admin'] === true;
  const sub = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : undefined;
  if (sub === undefined && !admin) throw new FeedmillError('unauthorized', 'the token names no user: it needs a "sub" claim', 'authorization');
  return Object.freeze({ sub, admin });
}

function reasonOf(error: unknown, algorithms: readonly string[]): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the token’s signature does not verify';
  if (error instanceof errors.JOSEAlgNotAllowed) return `the token is signed with an algorithm not accepted here (accepted: ${algorithms.join(', ')})`;
  if (error instanceof errors.JWTClaimValidationFailed) return `the token’s "${error.claim}" claim is not valid: ${error.reason}`;
  return 'the token is not a valid JWT';
}

/** The key and the algorithm it signs with: RS256 for RSA, ES256 for EC P-256. */
function readPublicKey(pem: string): { key: KeyObject; algorithm: 'RS256' | 'ES256' } {
  // Environment variables often carry a PEM on one line, its breaks written as \n.
  const key = createPublicKey(pem.replace(/\\n/g, '\n'));
  if (key.asymmetricKeyType === 'rsa') return { key, algorithm: 'RS256' };
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return { key, algorithm: 'ES256' };
  throw new Error(`FEEDMILL_JWT_PUBLIC_KEY must be an RSA or EC P-256 public key, not ${key.asymmetricKeyType}`);
}

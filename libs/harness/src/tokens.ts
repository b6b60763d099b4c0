import { SignJWT } from 'jose';

/**
 * Signs HS256 tokens as an application's backend would: one per user (`sub`), or an admin
 * token when `sub` is undefined.
 */
export function hs256Tokens(secret: string, lifetimeSeconds = 3600): (sub: string | undefined) => Promise<string> {
  const key = new TextEncoder().encode(secret);
  return (sub) => {
    const token = new SignJWT(sub === undefined ? { admin: true } : {}).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime(`${lifetimeSeconds}s`);
    return (sub === undefined ? token : token.setSubject(sub)).sign(key);
  };
}

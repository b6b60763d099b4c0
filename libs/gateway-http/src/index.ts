export { GatewayModule } from './gateway.module.js';
export { createHttpApp, httpAppOptions } from './http-app.js';
export type { HttpAppOptions } from './http-app.js';
export { TokenVerifier } from './auth/token-verifier.js';
export type { TokenKeys } from './auth/token-verifier.js';
export type { Caller } from './auth/caller.js';

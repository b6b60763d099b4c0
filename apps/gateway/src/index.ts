export { GatewayModule } from './gateway.module.js';
export { createHttpApp, logLevelsFrom } from './http-app.js';

export { GatewayModule } from './gateway.module.js';
export { createHttpApp } from './http-app.js';

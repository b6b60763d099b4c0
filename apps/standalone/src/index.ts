export { createStandaloneApp } from './standalone.js';

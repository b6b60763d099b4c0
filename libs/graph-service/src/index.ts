export { GraphModule } from './graph.module.js';
export { GraphService } from './graph.service.js';

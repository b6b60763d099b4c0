export { TimelineModule } from './timeline.module.js';
export { TimelineService } from './timeline.service.js';

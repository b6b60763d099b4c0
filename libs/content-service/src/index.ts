export { ContentModule } from './content.module.js';
export { ContentService } from './content.service.js';

import { Module } from '@nestjs/common';
import { CONTENT_STORE, MemoryContentStore } from '@feedmill/stores';
import { ContentMessageController } from './content.message.controller.js';
import { ContentService } from './content.service.js';

@Module({
  controllers: [ContentMessageController],
  providers: [ContentService, { provide: CONTENT_STORE, useFactory: () => new MemoryContentStore() }],
})
export class ContentModule {}

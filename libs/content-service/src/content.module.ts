import { Module } from '@nestjs/common';
import { STORE_FACTORY, type StoreFactory } from '@feedmill/runtime';
import { CONTENT_STORE } from '@feedmill/stores';
import { ContentMessageController } from './content.message.controller.js';
import { ContentService } from './content.service.js';

@Module({
  controllers: [ContentMessageController],
  providers: [ContentService, { provide: CONTENT_STORE, inject: [STORE_FACTORY], useFactory: (stores: StoreFactory) => stores.content() }],
})
export class ContentModule {}

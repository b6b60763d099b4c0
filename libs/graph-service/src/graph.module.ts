import { Module } from '@nestjs/common';
import { STORE_FACTORY, type StoreFactory } from '@feedmill/runtime';
import { GRAPH_STORE } from '@feedmill/stores';
import { GraphMessageController } from './graph.message.controller.js';
import { GraphService } from './graph.service.js';

@Module({
  controllers: [GraphMessageController],
  providers: [GraphService, { provide: GRAPH_STORE, inject: [STORE_FACTORY], useFactory: (stores: StoreFactory) => stores.graph() }],
})
export class GraphModule {}

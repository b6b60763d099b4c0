import { Module } from '@nestjs/common';
import { GRAPH_STORE, MemoryGraphStore } from '@feedmill/stores';
import { GraphMessageController } from './graph.message.controller.js';
import { GraphService } from './graph.service.js';

@Module({
  controllers: [GraphMessageController],
  providers: [GraphService, { provide: GRAPH_STORE, useFactory: () => new MemoryGraphStore() }],
})
export class GraphModule {}

import { Module } from '@nestjs/common';
import { FEED_GROUPS, type FeedGroups } from '@feedmill/config';
import { STORE_FACTORY, type StoreFactory } from '@feedmill/runtime';
import { TIMELINE_STORE } from '@feedmill/stores';
import { TimelineMessageController } from './timeline.message.controller.js';
import { TimelineService } from './timeline.service.js';

@Module({
  controllers: [TimelineMessageController],
  providers: [
    TimelineService,
    {
      provide: TIMELINE_STORE,
      inject: [FEED_GROUPS, STORE_FACTORY],
      useFactory: (groups: FeedGroups, stores: StoreFactory) => stores.timeline((reader) => groups.timelinePolicyOf(reader), { policies: groups.fingerprint, groupModels: groups.timelineModels }),
    },
  ],
})
export class TimelineModule {}

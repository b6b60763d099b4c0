import { Module } from '@nestjs/common';
import { FEED_GROUPS, type FeedGroups } from '@feedmill/platform';
import { MemoryTimelineStore, TIMELINE_STORE } from '@feedmill/stores';
import { TimelineMessageController } from './timeline.message.controller.js';
import { TimelineService } from './timeline.service.js';

@Module({
  controllers: [TimelineMessageController],
  providers: [
    TimelineService,
    {
      provide: TIMELINE_STORE,
      inject: [FEED_GROUPS],
      useFactory: (groups: FeedGroups) => new MemoryTimelineStore((reader) => groups.timelinePolicyOf(reader)),
    },
  ],
})
export class TimelineModule {}

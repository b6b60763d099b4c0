import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { partitionOfDeliveries, TimelinePartitioning, type DeliverRequest } from '@feedmill/contracts';
import { FANOUT_CLUSTER, type FanoutCluster, type JobDelivery, type JobWorker } from '@feedmill/fanout-cluster';
import type { DeliveryTarget } from '@feedmill/feed-models';
import { TIMELINE_PARTITIONING } from '@feedmill/runtime';
import { SERVICE_CLIENT, serviceDeliveryTarget, type ServiceClient } from '@feedmill/transport';

/**
 * Applies chunk jobs of large deliveries, one at a time, in every fan-out process of a
 * cluster (the planner too): each is a delivery request that timeline applies only while it
 * stands at the job's fence. A job applied is done; one refused (timeline has moved past its
 * event: it was done already, or its event was dead-lettered) is done as well; one that
 * fails goes back to the queue. A job's readers are all of one timeline partition, which
 * it goes to.
 */
@Injectable()
export class FanoutJobWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('fanout-jobs');
  /** Each timeline partition as a delivery target. */
  private readonly timelines: DeliveryTarget[];
  private worker?: JobWorker;
  private applied = 0;
  private refused = 0;
  private handedOutAgain = 0;

  constructor(
    @Inject(SERVICE_CLIENT) client: ServiceClient,
    @Optional() @Inject(FANOUT_CLUSTER) private readonly cluster?: FanoutCluster,
    @Optional() @Inject(TIMELINE_PARTITIONING) private readonly partitioning: TimelinePartitioning = new TimelinePartitioning(),
  ) {
    this.timelines = partitioning.all.map((partition) => serviceDeliveryTarget(client, partitioning.routeTo(partition)));
  }

  onApplicationBootstrap(): void {
    this.worker = this.cluster?.jobs.work((job, delivery) => this.apply(job, delivery));
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker?.stop();
  }

  /** Jobs this process applied, found done already, and was handed again (a lease ran out, or an attempt failed). */
  counters(): { jobsApplied: number; jobsRefused: number; jobsHandedOutAgain: number } {
    return { jobsApplied: this.applied, jobsRefused: this.refused, jobsHandedOutAgain: this.handedOutAgain };
  }

  private async apply(job: DeliverRequest, { position, chunk, attempt }: JobDelivery): Promise<void> {
    if (attempt > 1) {
      this.handedOutAgain++;
      this.logger.warn(`job ${chunk} of the fan-out at position ${position} handed out again (attempt ${attempt}): the lease before ran out, or the attempt failed`);
    }
    let applied: boolean;
    try {
      applied = (await this.timelines[partitionOfDeliveries(job, this.partitioning.count) ?? 0]!.deliver(job)).applied;
    } catch (error) {
      this.logger.warn(`job ${chunk} of the fan-out at position ${position} failed, back to the queue: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
    if (applied) this.applied++;
    else this.refused++;
  }
}

import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { FANOUT_CLUSTER, type FanoutCluster } from '@feedmill/fanout-cluster';
import { FanoutJobWorker } from './fanout-job.worker.js';
import { FanoutMessageController } from './fanout.message.controller.js';
import { defaultJobSettings, FANOUT_JOB_SETTINGS, FANOUT_RETRY_POLICY, FanoutService, type FanoutJobSettings, type FanoutRetryPolicy } from './fanout.service.js';

/** Closes the cluster's connection once the planner and the worker have let go of it. */
class FanoutClusterShutdown implements OnApplicationShutdown {
  constructor(@Inject(FANOUT_CLUSTER) private readonly cluster: FanoutCluster) {}

  async onApplicationShutdown(): Promise<void> {
    await this.cluster.close();
  }
}

@Module({ controllers: [FanoutMessageController], providers: [FanoutService, FanoutJobWorker] })
export class FanoutModule {
  /** Fan-out with its own retry policy (tests shorten it). */
  static withRetryPolicy(retry: FanoutRetryPolicy): DynamicModule {
    return { module: FanoutModule, providers: [{ provide: FANOUT_RETRY_POLICY, useValue: retry }] };
  }

  /**
   * Fan-out as one of several processes sharing `cluster`: it plans while it holds the
   * planner lease, and works chunk jobs all the time. The module closes the cluster when
   * the application stops.
   */
  static inCluster(cluster: FanoutCluster, jobs: Partial<FanoutJobSettings> = {}): DynamicModule {
    return {
      module: FanoutModule,
      providers: [{ provide: FANOUT_CLUSTER, useValue: cluster }, { provide: FANOUT_JOB_SETTINGS, useValue: { ...defaultJobSettings, ...jobs } }, FanoutClusterShutdown],
    };
  }
}

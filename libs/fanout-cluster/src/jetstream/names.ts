/**
 * Where a log's fan-out cluster lives on the NATS server, kept apart per log stream as
 * clusters sharing a server are.
 */
export const clusterNames = (logStream: string) => ({
  /** The work-queue stream of chunk jobs. */
  jobStream: `${logStream}_FANOUT_JOBS`,
  /** Its subjects: `<prefix>.<position>.<chunk>`. */
  jobSubjectPrefix: `fanout-jobs.${logStream}`,
  /** The durable consumer every fan-out process takes jobs from. */
  jobConsumer: 'workers',
  /** Core NATS subject a worker publishes to once a job of the event at `position` is done. */
  jobDoneSubject: (position: number) => `fanout-jobs-done.${logStream}.${position}`,
  /** The KV bucket holding the planner's lease, and its key. */
  plannerBucket: `${logStream}_fanout_planner`,
  plannerKey: 'planner',
  /** Core NATS subject of a request only the planner answers. */
  plannerRequestSubject: (name: string) => `fanout-planner.${logStream}.${name}`,
});

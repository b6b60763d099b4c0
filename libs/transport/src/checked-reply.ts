import { Logger } from '@nestjs/common';
import { FeedmillError, wire, type ReplyOf, type Subject } from '@feedmill/contracts';

const logger = new Logger('rpc');

/**
 * A reply, checked once and whole with its subject's reply check ({@link wire}): one of
 * another shape is an `internal` error that names the subject, logged here because no
 * caller can fix it. The reply is returned as it came, not zod's copy of it: reply schemas
 * hold no transforms or defaults, so the copy would only cost.
 */
export function checkedReply<S extends Subject>(subject: S, reply: unknown): ReplyOf<S> {
  const checked = wire[subject].replyCheck.safeParse(reply);
  if (checked.success) return reply as ReplyOf<S>;
  const issue = checked.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? 'reply' : `reply.${issue.path.join('.')}`;
  const error = new FeedmillError('internal', `${subject} answered with a malformed reply: ${where}: ${issue?.message ?? 'does not match'}`, undefined, {
    cause: checked.error,
  });
  logger.error(error.message);
  throw error;
}

import type { FeedStream, FeedStreamEvent } from '@feedmill/client';

/** A stream's next event, or a failure once `ms` pass without one, or when the stream ends. */
export async function nextStreamEvent(stream: FeedStream, ms = 10_000): Promise<FeedStreamEvent> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no stream event in ${ms} ms`)), ms)));
  try {
    const next = await Promise.race([stream.next(), timeout]);
    if (next.done) throw new Error('the stream ended');
    return next.value;
  } finally {
    clearTimeout(timer);
  }
}

import { FeedmillApiError } from '@feedmill/client';

/** The error a client call was refused with; fails when the call succeeds or fails otherwise. */
export async function refusal(call: Promise<unknown>): Promise<FeedmillApiError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof FeedmillApiError) return error;
    throw error;
  }
  throw new Error('the call was not refused');
}

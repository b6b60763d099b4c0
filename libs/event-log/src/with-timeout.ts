/** `promise`, or a failure with `message` once `ms` have passed without its answer. */
export function withTimeout<T>(promise: Promise<T>, ms: number, message = `no answer in ${ms} ms`): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

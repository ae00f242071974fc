/** A leaf: waits that must end. */

/** Thrown when something did not answer within its deadline (the thing itself may still be running). */
export class DeadlineError extends Error {
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what}: no answer within ${ms} ms`);
    this.name = 'DeadlineError';
  }
}

/** `promise`, or a DeadlineError after `ms`; the timer never keeps the process alive. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(what, ms)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Waits for `promise` at most `ms`; true when it settled in time (its outcome is not reported). */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  try {
    await withDeadline(promise, ms, 'wait');
    return true;
  } catch (e) {
    return !(e instanceof DeadlineError);
  }
}

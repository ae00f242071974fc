/**
 * Gateway calls in flight in one worker process, at most WORKER_CONCURRENCY: every job's calls
 * take a slot, and a window runs extra lanes only on slots that nobody is waiting for, so lanes
 * use idle capacity and never delay another window's first call.
 */
export class CallSlots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly capacity: number) {
    this.#free = capacity;
  }

  /** Slots free with nobody waiting for them. */
  idle(): number {
    return this.#waiting.length > 0 ? 0 : this.#free;
  }

  /** Resolves with the function that gives the slot back. */
  async acquire(): Promise<() => void> {
    if (this.#free > 0 && this.#waiting.length === 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}

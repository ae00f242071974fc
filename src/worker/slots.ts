/**
 * Gateway calls in flight in one worker process, at most WORKER_CONCURRENCY: every job's calls
 * take a slot, handed out in turn. A window may run extra lanes up to its fair share of the slots
 * (capacity / jobs running, rounded up), and beyond that only on slots nobody is waiting for: with
 * fewer windows than slots every slot stays busy, and a new job's first call waits its turn behind
 * at most a fair share of each running job's calls.
 */
export class CallSlots {
  #free: number;
  #jobs = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly capacity: number) {
    this.#free = capacity;
  }

  /** A job starts; the function returned says it ended. */
  enter(): () => void {
    this.#jobs++;
    let left = false;
    return () => {
      if (!left) this.#jobs--;
      left = true;
    };
  }

  /** Slots one running job may count on having in flight. */
  fairShare(): number {
    return Math.ceil(this.capacity / Math.max(1, this.#jobs));
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

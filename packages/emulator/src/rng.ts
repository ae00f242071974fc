/** A deterministic source of numbers in [0, 1), so a seed reproduces a whole emulator run. */
export type Rng = () => number;

/** mulberry32: tiny, fast and good enough for shuffles and fault dice (not for secrets). */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Independent streams per concern (order, faults, ids): drawing a fault die must not change which
 * events a later 'random' answer holds, or a test adding one fault would reshuffle everything.
 */
export function deriveRng(seed: number, stream: string): Rng {
  let h = (seed ^ 0x811c9dc5) >>> 0;
  for (let i = 0; i < stream.length; i++) {
    h = Math.imul(h ^ stream.charCodeAt(i), 0x01000193) >>> 0;
  }
  return createRng(h);
}

export function randomInt(rng: Rng, below: number): number {
  return Math.floor(rng() * below);
}

/** `count` distinct items in random order (partial Fisher-Yates on a copy). */
export function sampleInRandomOrder<T>(items: readonly T[], count: number, rng: Rng): T[] {
  const pool = items.slice();
  const n = Math.min(count, pool.length);
  for (let i = 0; i < n; i++) {
    const j = i + randomInt(rng, pool.length - i);
    const picked = pool[j] as T;
    pool[j] = pool[i] as T;
    pool[i] = picked;
  }
  pool.length = n;
  return pool;
}

export function randomHex(rng: Rng, length: number): string {
  let out = '';
  while (out.length < length) out += randomInt(rng, 16).toString(16);
  return out;
}

/**
 * How much a chain step's evidence is worth.
 *
 * A saturated answer of `size` events claims, under a chain hypothesis (newest-first, say), that it
 * holds every event of its query newer than its own oldest one. The alternative is that the
 * gateway kept some other subset: oldest-first is caught outright (the next step finds nothing
 * below), and a uniformly random subset stands for largest-magnitude-first too, on a catalog whose
 * magnitudes do not depend on time order. If the answer were a random subset of the `n` events its
 * query matched, what the later steps saw would be unlikely in two ways:
 *
 * - P_run: the next step re-read `checked` of its events at its oldest end and found no event
 *   between them that it lacked. For some run of `checked` consecutive members of a random
 *   `size`-subset: at most (size - checked + 1) * C(n - checked + 1, size - checked + 1) / C(n, size).
 * - P_below: the later steps found `below` events older than all of its events. That all of the
 *   `below` oldest events of the query were left out: C(n - below, size) / C(n, size).
 *
 * The first grows less likely as n grows, the second more likely, and n is only known to be at
 * least `known`. The bound is the largest value of min(P_run, P_below) over every such n.
 * Claims are accepted only while the sum of their bounds stays within the window's budget; the
 * others are re-read (verified) instead.
 */
import { WRONG_COMPLETION_BUDGET, type Claim } from './frontier.js';

/** log Gamma, Lanczos approximation (g = 7, n = 9): plenty for ratios of binomials. */
function logGamma(x: number): number {
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** log of (a)_k falling: a (a-1) ... (a-k+1). */
const logFalling = (a: number, k: number): number => logGamma(a + 1) - logGamma(a - k + 1);

function logRun(n: number, size: number, checked: number): number {
  if (checked <= 1) return 0;
  return Math.min(0, Math.log(size - checked + 1) + logFalling(size, checked - 1) - logFalling(n, checked - 1));
}

function logBelow(n: number, size: number, below: number): number {
  if (below <= 0) return 0;
  return logFalling(n - size, below) - logFalling(n, below);
}

/**
 * Upper bound on the chance that a claim backed by this evidence is false; 1 when nothing can be
 * said. `known`: distinct events seen in the claim's query (the answer's own included).
 */
export function falseClaimBound(checked: number, size: number, known: number, below = 0): number {
  const least = Math.max(known, size + below, size + 1);
  if (checked > size) return 1;
  const gap = (n: number) => logBelow(n, size, below) - logRun(n, size, checked);
  if (gap(least) >= 0) return Math.exp(logRun(least, size, checked));
  // P_below rises and P_run falls with n: the worst case is where they cross.
  let lo = least;
  let hi = least * 2;
  while (gap(hi) < 0 && hi < 1e12) hi *= 2;
  if (gap(hi) < 0) return Math.exp(logBelow(hi, size, below));
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (gap(mid) < 0) lo = mid;
    else hi = mid;
  }
  return Math.min(1, Math.exp(Math.max(logBelow(hi, size, below), logRun(hi, size, checked))));
}

/** The fewest confirmed events that bring the bound under `target`, or null when none can. */
export function neededChecks(size: number, expectedBelow: number, target: number): number | null {
  const below = Math.max(0, Math.floor(expectedBelow));
  for (let k = 2; k < size; k++) if (falseClaimBound(k, size, size + below, below) <= target) return k;
  return null;
}

/** The budget share one claim should aim for, given how many claims the window will probably make. */
export function riskTarget(expectedClaims: number): number {
  return WRONG_COMPLETION_BUDGET / (1.5 * Math.max(4, expectedClaims));
}

export function claimBound(c: Claim): number {
  return falseClaimBound(c.checked, c.size, c.known, c.below);
}

/**
 * Which checked claims to accept: the strongest first, while the window's total stays strictly
 * below the budget. The rest must be verified by a re-read.
 */
export function acceptClaims(claims: readonly Claim[], riskSpent: number): { accepted: Claim[]; rejected: Claim[]; riskSpent: number } {
  const scored = claims.map((c) => ({ c, bound: claimBound(c) })).sort((a, b) => a.bound - b.bound);
  const accepted: Claim[] = [];
  const rejected: Claim[] = [];
  let spent = riskSpent;
  for (const { c, bound } of scored) {
    if (bound < 1 && spent + bound < WRONG_COMPLETION_BUDGET) {
      spent += bound;
      accepted.push(c);
    } else {
      rejected.push(c);
    }
  }
  return { accepted, rejected, riskSpent: spent };
}

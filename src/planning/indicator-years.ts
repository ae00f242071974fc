/**
 * The years of an indicator chunk, proven. The spec caps no answer's values, yet a gateway keeping
 * the upstream API's form may still leave years out: it pages as that API does (fifty values a page,
 * the newest first), or leaves out the years that hold no value. A year is read when an answer holds
 * it, value or null. A run of years no answer held is asked again on its own, and is proven to hold
 * nothing when an answer to exactly that run holds none of its years: however a gateway truncates, it
 * returns at least one value of a span that has one (the one assumption the earthquake cap rests
 * on too). Each answer either proves its run empty or leaves runs strictly shorter, so a chunk of n
 * years takes at most n calls; a gateway answering every year asked takes one. Pure.
 */
import * as z from 'zod';

export const yearRunSchema = z.strictObject({ startYear: z.number().int(), endYear: z.number().int() });
export type YearRun = z.infer<typeof yearRunSchema>;

/** A chunk's saved progress (ingest_partitions.frontier): the runs of years still to ask, in order. */
export const indicatorProgressSchema = z.strictObject({ ask: z.array(yearRunSchema).min(1) });
export type IndicatorProgress = z.infer<typeof indicatorProgressSchema>;

/** The runs of consecutive years of `run` that `years` lacks, oldest first. */
export function missingRuns(run: YearRun, years: ReadonlySet<number>): YearRun[] {
  const out: YearRun[] = [];
  for (let y = run.startYear; y <= run.endYear; y++) {
    if (years.has(y)) continue;
    const last = out.at(-1);
    if (last && last.endYear === y - 1) last.endYear = y;
    else out.push({ startYear: y, endYear: y });
  }
  return out;
}

/**
 * The runs left to ask after an answer to the first of `pending` held `years`: none of that run's
 * years proves it empty; otherwise the years it lacked are asked again, each run of them alone.
 */
export function afterAnswer(pending: readonly YearRun[], years: ReadonlySet<number>): YearRun[] {
  const [asked, ...rest] = pending;
  if (asked === undefined) return [];
  const held = [...years].some((y) => y >= asked.startYear && y <= asked.endYear);
  return held ? [...missingRuns(asked, years), ...rest] : rest;
}

/** Where a chunk's read starts: the runs its saved progress left inside it, else the whole chunk. */
export function startingRuns(chunk: YearRun, saved: unknown): YearRun[] {
  const parsed = indicatorProgressSchema.safeParse(saved);
  const inside = (r: YearRun) =>
    r.startYear >= chunk.startYear && r.endYear <= chunk.endYear && r.startYear <= r.endYear;
  const runs = parsed.success ? parsed.data.ask.filter(inside) : [];
  return runs.length > 0 ? runs : [chunk];
}

/** What to save after an answer: the runs left, or nothing once the chunk is read. */
export function progressOf(pending: readonly YearRun[]): IndicatorProgress | null {
  return pending.length > 0 ? { ask: [...pending] } : null;
}

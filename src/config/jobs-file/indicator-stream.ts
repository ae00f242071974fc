/** An indicator stream: its keys, the rules tying them together, and its resolved form. */
import { z } from 'zod';
import { LIMITS, countryCodeSchema, indicatorCodeSchema } from '../../gateway/schemas.js';
import { streamNameSchema } from './fields.js';
import type { Report, Segment } from './problem-path.js';
import { scheduleOf, scheduleShape } from './schedule.js';
import type { IndicatorStreamConfig } from './types.js';

export function indicatorSchema(now: Date) {
  const currentYear = now.getUTCFullYear();
  const year = z
    .number()
    .int()
    .min(LIMITS.firstYear)
    .max(currentYear, {
      error: (iss) => `must not be after the current year (${currentYear}), got ${String(iss.input)}`,
    });
  const country = z
    .string()
    .transform((s) => s.toUpperCase())
    .pipe(countryCodeSchema);

  return z.strictObject({
    name: streamNameSchema,
    enabled: z.boolean().optional(),
    indicators: z.array(indicatorCodeSchema).min(1),
    countries: z.array(country).min(1),
    from_year: year.optional(),
    to_year: year.optional(),
    ...scheduleShape(),
  });
}

export function indicatorRules(
  item: Record<string, unknown>,
  base: readonly Segment[],
  report: Report,
  now: Date,
): void {
  const currentYear = now.getUTCFullYear();
  // Only years the schema accepts are compared, so a bad year is reported once, by the schema.
  const validYear = (v: unknown): v is number =>
    typeof v === 'number' && Number.isInteger(v) && v >= LIMITS.firstYear && v <= currentYear;
  if (validYear(item.from_year) && validYear(item.to_year) && item.to_year < item.from_year) {
    report([...base, 'to_year'], `must not be before from_year (${item.from_year}), got ${item.to_year}`);
  }
  // Codes are compared without regard to case: countries are upper-cased anyway.
  for (const key of ['indicators', 'countries'] as const) {
    const codes = item[key];
    if (!Array.isArray(codes)) continue;
    const seen = new Map<string, number>();
    codes.forEach((code: unknown, j) => {
      if (typeof code !== 'string') return;
      const first = seen.get(code.toUpperCase());
      if (first !== undefined) report([...base, key, j], `duplicate of ${key}[${first}] (${JSON.stringify(code)})`);
      else seen.set(code.toUpperCase(), j);
    });
  }
}

export function resolveIndicator(s: z.output<ReturnType<typeof indicatorSchema>>): IndicatorStreamConfig {
  return {
    name: s.name,
    indicators: s.indicators,
    countries: s.countries,
    fromYear: s.from_year ?? null,
    toYear: s.to_year ?? null,
    schedule: scheduleOf(s),
    enabled: s.enabled ?? true,
  };
}

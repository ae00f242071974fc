/** RFC 3339 timestamp with a `Z` or numeric offset; fractional seconds allowed. */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export function isRfc3339(value: string): boolean {
  const m = RFC3339.exec(value);
  if (!m) return false;
  const [, , month, day, hour, minute, second] = m.map(Number) as number[];
  if (month! < 1 || month! > 12 || day! < 1 || day! > 31) return false;
  if (hour! > 23 || minute! > 59 || second! > 60) return false;
  // Date.parse rolls 2025-02-31 over to March; a real date round-trips its day of month.
  const [, year] = m;
  const daysInMonth = new Date(Date.UTC(Number(year), month!, 0)).getUTCDate();
  return day! <= daysInMonth && !Number.isNaN(Date.parse(value));
}

/** Canonical wire form: UTC, millisecond precision only when it is not zero. */
export function toRfc3339(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

export const DAY_MS = 86_400_000;

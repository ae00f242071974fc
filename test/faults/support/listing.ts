const LISTED = 6;

/** The first few items of a problem, and how many more there are: enough to act on, short enough to read. */
export function list<T>(items: readonly T[], show: (t: T) => string): string {
  const shown = items.slice(0, LISTED).map(show).join('; ');
  return items.length > LISTED ? `${shown}; ... ${items.length - LISTED} more` : shown;
}

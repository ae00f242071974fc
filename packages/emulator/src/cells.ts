import { EmulatorDataError } from './spec.js';

/** Empty cell means "no value" in both upstream formats; anything else must be a finite number. */
export function numberOrNull(cell: string, what: string): number | null {
  if (cell.trim() === '') return null;
  const n = Number(cell);
  if (!Number.isFinite(n)) throw new EmulatorDataError(`${what}: not a number: ${JSON.stringify(cell)}`);
  return n;
}

export function emptyToNull(cell: string | null | undefined): string | null {
  return cell === undefined || cell === null || cell === '' ? null : cell;
}

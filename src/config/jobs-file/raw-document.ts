/**
 * Reading the document as plain JS before validation: cross-field rules run even when some fields
 * are invalid, so they must cope with any shape.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export const has = (obj: Record<string, unknown>, key: string): boolean => obj[key] !== undefined;

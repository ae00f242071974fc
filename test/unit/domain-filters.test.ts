import { describe, expect, it } from 'vitest';
import { magnitudeFloor, requestMinMagnitude, NO_FILTERS } from '../../src/domain/filters.js';

describe('the magnitude a request asks for', () => {
  it('is a millionth below the minimum, so a gateway comparing with > or holding float32 still returns events at it', () => {
    expect(requestMinMagnitude({ ...NO_FILTERS, minMagnitude: 2.5 })).toEqual({ min_magnitude: 2.499999 });
    expect(JSON.stringify(requestMinMagnitude({ ...NO_FILTERS, minMagnitude: 2.3 }))).toBe(
      '{"min_magnitude":2.299999}',
    );
    // 2.3 held as a float32 passes the floor.
    expect(Math.fround(2.3)).toBeLessThan(2.3);
    expect(Math.fround(2.3)).toBeGreaterThanOrEqual(magnitudeFloor(2.3));
    expect(requestMinMagnitude(NO_FILTERS)).toEqual({});
  });

  it('stays within the spec range of -1 to 10', () => {
    expect(magnitudeFloor(-1)).toBe(-1);
    expect(magnitudeFloor(10)).toBe(9.999999);
  });
});

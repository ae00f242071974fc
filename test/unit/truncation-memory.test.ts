import { describe, expect, it } from 'vitest';
import { TruncationMemory } from '../../src/worker/truncation-memory.js';

describe('TruncationMemory', () => {
  it('forgets a verdict after its TTL, and keeps none with a TTL of 0', () => {
    let now = 0;
    const memory = new TruncationMemory(1000, () => now);
    memory.set('gw|earthquake', 'newest');
    expect(memory.get('gw|earthquake')).toBe('newest');
    expect(memory.get('other|earthquake')).toBe('unknown');
    now = 999;
    expect(memory.get('gw|earthquake')).toBe('newest');
    now = 1000;
    expect(memory.get('gw|earthquake')).toBe('unknown');
    const paranoid = new TruncationMemory(0, () => now);
    paranoid.set('gw|earthquake', 'newest');
    expect(paranoid.get('gw|earthquake')).toBe('unknown');
  });
  it("'unknown' clears what was known", () => {
    const memory = new TruncationMemory(60_000);
    memory.set('k', 'not-newest');
    memory.set('k', 'unknown');
    expect(memory.get('k')).toBe('unknown');
  });
});

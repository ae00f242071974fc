import { describe, expect, it } from 'vitest';
import { lanesNow } from '../../src/worker/window-lanes.js';
import { CallSlots } from '../../src/worker/slots.js';

describe('call slots', () => {
  it("a job's fair share is the capacity over the jobs running, rounded up; a job that ends gives its share back once", () => {
    const slots = new CallSlots(16);
    expect(slots.fairShare()).toBe(16);
    const leaves = Array.from({ length: 12 }, () => slots.enter());
    expect(slots.fairShare()).toBe(2);
    for (const leave of leaves.slice(0, 9)) leave();
    leaves[0]!();
    expect(slots.fairShare()).toBe(6);
  });

  it('hands slots out in turn once all are taken', async () => {
    const slots = new CallSlots(2);
    const a = await slots.acquire();
    await slots.acquire();
    expect(slots.idle()).toBe(0);
    const order: string[] = [];
    const c = slots.acquire().then((release) => (order.push('c'), release));
    const d = slots.acquire().then((release) => (order.push('d'), release));
    a();
    (await c)();
    (await d)();
    expect(order).toEqual(['c', 'd']);
    expect(slots.idle()).toBe(1);
  });
});

describe('lanesNow', () => {
  it('sends one query when nothing is in flight, even with no slot idle and a share of one', () => {
    expect(lanesNow(0, 4, 1, 0)).toBe(1);
  });

  it("fills the window's fair share even when no slot is idle: with fewer windows than slots every slot stays busy", () => {
    expect(lanesNow(1, 4, 2, 0)).toBe(1);
    expect(lanesNow(2, 4, 2, 0)).toBe(0);
  });

  it('goes past its share only on idle slots, and never past WINDOW_LANES', () => {
    expect(lanesNow(2, 4, 2, 5)).toBe(2);
    expect(lanesNow(0, 4, 16, 16)).toBe(4);
    expect(lanesNow(4, 4, 16, 12)).toBe(0);
    expect(lanesNow(1, 1, 16, 16)).toBe(0);
  });
});

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJobsFile } from '../../src/config/jobs-file.js';
import { desiredSchedulers, sameScheduler, TICK_JOB_NAME } from '../../src/service/schedulers.js';
import { tickTimeMs } from '../../src/service/tick.js';

const now = () => new Date('2026-06-15T12:00:00Z');
const fixture = (name: string) => join(import.meta.dirname, '../fixtures/jobs', name);

describe('desiredSchedulers', () => {
  it('has one scheduler per enabled stream, cron in UTC unless a zone is given', async () => {
    const file = await loadJobsFile(fixture('example.yaml'), now);
    expect(desiredSchedulers(file)).toEqual([
      {
        id: 'earthquake:global-m2_5',
        repeat: { pattern: '*/10 * * * *', tz: 'UTC' },
        data: { kind: 'earthquake', stream: 'global-m2_5', tier: 0 },
      },
      {
        id: 'earthquake:california',
        repeat: { pattern: '*/5 * * * *', tz: 'UTC' },
        data: { kind: 'earthquake', stream: 'california', tier: 0 },
      },
      {
        id: 'indicator:macro',
        repeat: { pattern: '0 4 * * 1', tz: 'UTC' },
        data: { kind: 'indicator', stream: 'macro' },
      },
    ]);
  });

  it("has one scheduler per refresh tier, the first under the stream's own id", async () => {
    const file = await loadJobsFile(join(import.meta.dirname, '../../jobs.yaml'), now);
    const tiered = file.earthquakes.find((s) => s.refresh.length > 1)!;
    const ids = desiredSchedulers(file)
      .filter((d) => d.data.stream === tiered.name)
      .map((d) => [d.id, d.data.tier]);
    expect(ids).toEqual(
      tiered.refresh.map((_, i) => [i === 0 ? `earthquake:${tiered.name}` : `earthquake:${tiered.name}:tier${i}`, i]),
    );
  });

  it('skips disabled streams and keeps every and time zones', async () => {
    const file = await loadJobsFile(fixture('extras.yaml'), now);
    const desired = desiredSchedulers(file);
    expect(desired.map((d) => d.id)).toEqual(['earthquake:quick', 'indicator:mortality', 'indicator:defaults']);
    expect(desired[0]!.repeat).toEqual({ every: 30_000 });
    expect(desired[1]!.repeat).toEqual({ every: 7 * 86_400_000 });
  });
});

describe('sameScheduler', () => {
  const desired = { id: 'earthquake:a', repeat: { every: 60_000 }, data: { kind: 'earthquake' as const, stream: 'a' } };
  const stored = {
    key: 'earthquake:a',
    name: TICK_JOB_NAME,
    every: 60_000,
    template: { data: { kind: 'earthquake', stream: 'a' } },
  };

  it('is true only when timing, name and payload all match', () => {
    expect(sameScheduler(stored, desired)).toBe(true);
    expect(sameScheduler({ ...stored, every: 120_000 }, desired)).toBe(false);
    expect(sameScheduler({ ...stored, template: { data: { kind: 'indicator', stream: 'a' } } }, desired)).toBe(false);
    expect(
      sameScheduler(
        { key: 'earthquake:a', name: TICK_JOB_NAME, pattern: '* * * * *', tz: 'UTC', template: stored.template },
        desired,
      ),
    ).toBe(false);
  });

  it('compares cron patterns with their zone', () => {
    const cron = { ...desired, repeat: { pattern: '0 * * * *', tz: 'Asia/Tokyo' } };
    const base = { key: 'earthquake:a', name: TICK_JOB_NAME, pattern: '0 * * * *', template: stored.template };
    expect(sameScheduler({ ...base, tz: 'Asia/Tokyo' }, cron)).toBe(true);
    expect(sameScheduler({ ...base, tz: 'UTC' }, cron)).toBe(false);
  });
});

describe('tickTimeMs', () => {
  it('is the due time in the scheduler job id, never after now', () => {
    expect(tickTimeMs('repeat:earthquake:a:1500', 10_000)).toBe(1_500);
    expect(tickTimeMs('repeat:indicator:x.y-z:50000', 10_000)).toBe(10_000);
    expect(tickTimeMs('manual-tick', 10_000)).toBe(10_000);
    expect(tickTimeMs(undefined, 10_000)).toBe(10_000);
  });
});

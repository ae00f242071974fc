import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coverageProofs, earthquakeEvents, ingestPartitions } from '../../src/db/schema.js';
import { startEmulator } from '@gateway-ingest/emulator';
import type { TestDatabase } from '../support/isolation.js';
import { quake, randomKey, startServiceFixture, waitFor, type ServiceFixture } from '../support/service.js';

const HOUR = 3_600_000;

/** Two tiers: the last hour every second, the last day every two seconds (the band from 1 h to 1 d). */
const JOBS = `
earthquakes:
  - name: tiered
    refresh:
      - { within: 1h, every: 1s }
      - { within: 1d, every: 2s }
`;

describe("start: a tiered refresh picks up revisions and deletions within each tier's period", () => {
  let f: ServiceFixture;
  let db: TestDatabase;
  const key = randomKey();
  const now = Date.now();
  const recent = quake('tier-recent', now - HOUR / 2, 2.1, 'Recent');
  const older = quake('tier-older', now - 3 * HOUR, 3.3, 'Older');
  const kept = quake('tier-kept', now - 5 * HOUR, 4.4, 'Kept');

  beforeAll(async () => {
    f = await startServiceFixture({ key, events: [recent, older, kept], indicatorFiles: [], jobsYaml: JOBS });
    ({ db } = f);
  });

  afterAll(async () => {
    await f?.stop();
  });

  const event = async (id: string) =>
    (await db.db.select().from(earthquakeEvents).where(eq(earthquakeEvents.id, id)))[0];

  it('reads each band, then updates the revised event and marks the deleted one, keeping both rows', async () => {
    await waitFor(
      async () => (await event('tier-recent')) && (await event('tier-older')) && (await event('tier-kept')),
      20_000,
      'the first runs of both tiers',
    );

    // Upstream: the recent event is revised, the older one deleted; same gateway address.
    const port = Number(new URL(f.emulator.url).port);
    await f.emulator.close();
    f.emulator = await startEmulator({
      key,
      port,
      events: [{ ...recent, magnitude: 2.7, place: 'Recent, revised' }, kept],
      indicatorFiles: [],
    });

    await waitFor(
      async () => (await event('tier-recent'))?.magnitude === 2.7,
      20_000,
      'tier 0 picking up the revision',
    );
    await waitFor(async () => (await event('tier-older'))?.deletedAt, 20_000, 'tier 1 marking the deletion');
    expect(await event('tier-recent')).toMatchObject({ place: 'Recent, revised', deletedAt: null });
    expect((await event('tier-older'))?.deletedExecutionId).not.toBeNull();
    expect(await event('tier-kept')).toMatchObject({ deletedAt: null, magnitude: 4.4 });
  });

  it('keeps one partition row per tier slot however many ticks ran, and records what each proved', async () => {
    const rows = await db.db.select().from(ingestPartitions);
    expect(rows.map((r) => r.partitionKey).sort()).toEqual(['refresh-tier0-0', 'refresh-tier1-0']);
    const proofs = await db.db.select().from(coverageProofs);
    expect(proofs.length).toBeGreaterThan(0);
    // The proven parts reach from a day ago to (nearly) now, with no gap between the tiers' bands.
    const lo = Math.min(...proofs.map((p) => p.lo));
    const hi = Math.max(...proofs.map((p) => p.hi));
    expect(lo).toBeLessThanOrEqual(now - 23 * HOUR);
    expect(hi).toBeGreaterThanOrEqual(now);
  });
});

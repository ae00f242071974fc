import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamRequest } from '../../src/cli/backfill-request.js';

const NOW_MS = Date.parse('2026-06-15T12:00:00Z');
const JOBS = `
earthquakes:
  - name: quakes
    min_magnitude: 4
    every: 10m
    backfill_from: 2025-05-06
  - name: recent
    every: 10m
indicators:
  - name: gdp
    indicators: [NY.GDP.MKTP.CD]
    countries: [us, CHN]
    from_year: 2000
    every: 1d
`;

describe('streamRequest: a jobs.yaml stream as `backfill --stream` and `plan --stream` take it', () => {
  let dir: string;
  let path: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gi-stream-request-'));
    path = join(dir, 'jobs.yaml');
    await writeFile(path, JOBS);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('an earthquake stream: its filters, from backfill_from up to now', async () => {
    expect(await streamRequest(path, 'quakes', true, NOW_MS)).toEqual({
      operation: 'earthquake',
      filters: { minMagnitude: 4, circle: null },
      fromMs: Date.parse('2025-05-06T00:00:00Z'),
      toMs: NOW_MS,
      refresh: true,
      streamName: 'quakes',
    });
  });

  it('an indicator stream: its codes, from from_year to the current year', async () => {
    expect(await streamRequest(path, 'gdp', false, NOW_MS)).toEqual({
      operation: 'indicator',
      indicators: ['NY.GDP.MKTP.CD'],
      countries: ['US', 'CHN'],
      fromYear: 2000,
      toYear: 2026,
      refresh: false,
      streamName: 'gdp',
    });
  });

  it('names the stream and the file when it cannot be backfilled', async () => {
    await expect(streamRequest(path, 'recent', false, NOW_MS)).rejects.toThrow(
      `--stream: "recent" has no backfill_from in ${path}`,
    );
    await expect(streamRequest(path, 'nope', false, NOW_MS)).rejects.toThrow(
      `--stream: "nope" is not declared in ${path}`,
    );
  });
});

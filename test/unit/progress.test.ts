import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  formatDuration,
  inlineWorkerLogFile,
  progressFigures,
  progressLine,
  progressReporter,
} from '../../src/cli/progress.js';
import type { WaitProgress } from '../../src/ingest/wait.js';

const at = (p: Partial<WaitProgress>): WaitProgress => ({
  total: 10,
  done: 0,
  partial: 0,
  failed: 0,
  rowsWritten: 0,
  billedCalls: 0,
  ...p,
});

/** A stream standing in for stderr; `isTTY` as given. */
function stream(isTTY: boolean): NodeJS.WriteStream & { text(): string } {
  const s = new PassThrough() as unknown as NodeJS.WriteStream & { text(): string };
  let text = '';
  s.on('data', (c: Buffer) => (text += c.toString()));
  Object.assign(s, { isTTY, columns: 200, text: () => text });
  return s;
}

describe('progress figures', () => {
  it('counts rows and billed calls since the wait began, the spend rate and the ETA from the pace so far', () => {
    const f = progressFigures(
      at({ done: 2, rowsWritten: 500, billedCalls: 7 }),
      at({ done: 5, failed: 1, rowsWritten: 2500, billedCalls: 37 }),
      120_000,
    );
    expect(f).toMatchObject({
      finished: 6,
      total: 10,
      failed: 1,
      rowsWritten: 2000,
      billedCalls: 30,
      billedPerMinute: 15,
    });
    // 4 finished in 2 min, 4 left: 2 min more.
    expect(f.etaMs).toBe(120_000);
  });

  it('has no ETA until a partition finished, none needed once all did, and no rate over a few seconds', () => {
    expect(progressFigures(at({}), at({ billedCalls: 3 }), 5_000)).toMatchObject({
      etaMs: null,
      billedPerMinute: null,
    });
    expect(progressFigures(at({}), at({ done: 10 }), 5_000).etaMs).toBe(0);
  });

  it('prints one readable line', () => {
    const line = progressLine(
      'backfill',
      progressFigures(at({}), at({ done: 4, partial: 1, rowsWritten: 12_345, billedCalls: 60 }), 240_000),
    );
    expect(line).toBe(
      'backfill: 5/10 partitions (1 partial) | 12,345 rows | 60 billed calls (15.0/min) | ETA 4m 00s | 4m 00s elapsed',
    );
    expect([formatDuration(9_400), formatDuration(65_000), formatDuration(3_723_000)]).toEqual([
      '9s',
      '1m 05s',
      '1h 02m',
    ]);
  });
});

describe('progress reporter', () => {
  afterEach(() => vi.useRealTimers());

  it('without a TTY prints a line every interval, changed or not, and a last one at the end', () => {
    vi.useFakeTimers();
    const out = stream(false);
    const r = progressReporter(out, 'backfill', { intervalMs: 5_000 });
    r.update(at({}));
    r.update(at({}));
    expect(out.text().split('\n').filter(Boolean)).toHaveLength(1);
    vi.advanceTimersByTime(15_000);
    expect(out.text().split('\n').filter(Boolean)).toHaveLength(4);
    r.note('a worker is taking jobs again');
    r.update(at({ done: 10 }));
    r.stop();
    vi.advanceTimersByTime(15_000);
    const lines = out.text().split('\n').filter(Boolean);
    expect(lines).toHaveLength(6);
    expect(lines[4]).toBe('a worker is taking jobs again');
    expect(lines[5]).toMatch(/^backfill: 10\/10 partitions \| 0 rows \| 0 billed calls .*ETA 0s/);
  });

  it('on a TTY draws a bar with the figures, notes above it', () => {
    const out = stream(true);
    const r = progressReporter(out, 'backfill');
    r.update(at({ done: 1, billedCalls: 2 }));
    r.note('PostgreSQL does not answer; still waiting');
    r.update(at({ done: 3, billedCalls: 9, rowsWritten: 400 }));
    r.stop();
    const text = out.text();
    expect(text).toContain('PostgreSQL does not answer; still waiting');
    expect(text).toMatch(/3\/10 partitions \| 400 rows \| 7 billed calls/);
    expect(text).toMatch(/ETA/);
  });

  it('sends inline worker logs to a file on a TTY only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gi-progress-'));
    try {
      expect(inlineWorkerLogFile(stream(false), { logLevel: 'info' }, dir)).toBeNull();
      const file = inlineWorkerLogFile(stream(true), { logLevel: 'info' }, dir)!;
      expect(file.path.startsWith(dir)).toBe(true);
      file.log.warn({ job: 'x' }, 'gateway call failed');
      file.close();
      expect(readFileSync(file.path, 'utf8')).toMatch(/"msg":"gateway call failed"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { describe, it } from 'vitest';
import { openScenario, suiteFixture } from './support/scenario.js';
import { startSilenceProxy } from './support/silence-proxy.js';
import { verdict } from './support/verdict.js';
import { expectReturns0 } from './support/waiting.js';

describe('calibrate', () => {
  const fixture = suiteFixture();
  it.each([400])('latency %i', async (latencyMs) => {
    const s = await openScenario({ name: `calib-${latencyMs}`, services: fixture.services, latencyMs });
    const pg = await startSilenceProxy(fixture.services.pg.port);
    const rd = await startSilenceProxy(fixture.services.redis.port);
    const problems: string[] = [];
    try {
      const u = new URL(s.dbUrl);
      u.port = String(pg.port);
      const p = s.backfill('inline', ['--wait', '--inline'], { DATABASE_URL: u.toString(), REDIS_URL: `redis://127.0.0.1:${rd.port}/0`, WINDOW_LANES: '1' });
      const t = setInterval(() => s.note(`calls ${s.emulator.calls.length} pg ${JSON.stringify(pg.counts())} redis ${JSON.stringify(rd.counts())}`), 1000);
      await expectReturns0(s, p, 'inline', 120_000, problems);
      clearInterval(t);
      await verdict(s, fixture.catalog, { disruptions: [], problems });
      console.log(s.timeline.join('\n'));
    } finally {
      await s.finish();
      await pg.close();
      await rd.close();
    }
  }, 150_000);
});

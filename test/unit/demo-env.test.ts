import { describe, expect, it } from 'vitest';
import { DEMO_QUEUE_PREFIX, demoBanner, demoDatabaseUrl, demoEnv } from '../../src/cli/demo-env.js';
import { parseEnv } from '../../src/config/env.js';

describe('the demo is separate', () => {
  it('uses its own database on the server DATABASE_URL names, or the default server', () => {
    expect(demoDatabaseUrl(undefined)).toBe('postgres://postgres:postgres@127.0.0.1:5432/gateway_ingest_demo');
    expect(demoDatabaseUrl('')).toBe('postgres://postgres:postgres@127.0.0.1:5432/gateway_ingest_demo');
    expect(demoDatabaseUrl('postgres://app:secret@db.internal:6543/gateway_ingest?sslmode=require')).toBe(
      'postgres://app:secret@db.internal:6543/gateway_ingest_demo?sslmode=require',
    );
  });

  it('never the production database or queue prefix, whatever the environment says', () => {
    const env = parseEnv(
      demoEnv(
        { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/gateway_ingest', QUEUE_PREFIX: 'gateway-ingest' },
        { url: 'http://127.0.0.1:8787', key: 'k' },
      ),
    );
    expect(new URL(env.databaseUrl).pathname).toBe('/gateway_ingest_demo');
    expect(env.queuePrefix).toBe(DEMO_QUEUE_PREFIX);
    expect(env.gateway.baseUrl).toBe('http://127.0.0.1:8787');
  });

  it('says so in its first line, without the password', () => {
    const line = demoBanner('postgres://app:secret@db.internal:6543/gateway_ingest_demo');
    expect(line).toMatch(
      /^demo: database gateway_ingest_demo on db\.internal:6543 .*queue prefix gateway-ingest-demo, never the production defaults/,
    );
    expect(line).not.toContain('secret');
  });
});

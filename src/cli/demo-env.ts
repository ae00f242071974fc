/**
 * Where the demo writes: a database and a queue prefix of its own on the servers the environment
 * names, never the production defaults. Emulator data in the production database would mark real
 * months as done, and a later real backfill of those months would skip them.
 */
import { DEFAULT_DATABASE_URL, redactUrl } from '../config/env.js';

export const DEMO_DATABASE = 'gateway_ingest_demo';
export const DEMO_QUEUE_PREFIX = 'gateway-ingest-demo';

/** The demo database on the server of DATABASE_URL (or of the default URL), whatever database that names. */
export function demoDatabaseUrl(databaseUrl: string | undefined): string {
  const url = new URL(databaseUrl && databaseUrl !== '' ? databaseUrl : DEFAULT_DATABASE_URL);
  url.pathname = `/${DEMO_DATABASE}`;
  return url.toString();
}

/** The variables the demo runs with: its own database and prefix, the local emulator as the gateway. */
export function demoEnv(env: NodeJS.ProcessEnv, gateway: { url: string; key: string }): NodeJS.ProcessEnv {
  return {
    ...env,
    DATABASE_URL: demoDatabaseUrl(env.DATABASE_URL),
    QUEUE_PREFIX: DEMO_QUEUE_PREFIX,
    GATEWAY_BASE_URL: gateway.url,
    MARKET_KEY: gateway.key,
    RETRY_BASE_DELAY_MS: env.RETRY_BASE_DELAY_MS ?? '200',
    LOG_LEVEL: env.LOG_LEVEL ?? 'warn',
  };
}

/** The demo's first line: where it writes, and that this is not production. */
export function demoBanner(databaseUrl: string): string {
  const u = new URL(databaseUrl);
  return (
    `demo: database ${DEMO_DATABASE} on ${u.host} (${redactUrl(databaseUrl)}) and queue prefix ${DEMO_QUEUE_PREFIX}, ` +
    'never the production defaults (gateway_ingest, gateway-ingest)'
  );
}

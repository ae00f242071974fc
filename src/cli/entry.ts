/**
 * The process entry (bin/gateway-ingest.js, dev-entry.ts): tracing first, then the CLI. The CLI's
 * modules are imported only once tracing has started, since the PostgreSQL instrumentation can only
 * patch `pg` before its first import (telemetry/sdk.ts); with tracing off nothing waits on it.
 */
import { NO_TELEMETRY, startTelemetry, type Telemetry } from '../telemetry/start.js';
import { exitFor } from './exit.js';

/** No OTEL_* variable: tracing is off, and its settings need not even be parsed (a command starts faster). */
async function telemetryFor(env: NodeJS.ProcessEnv): Promise<Telemetry> {
  if (!Object.keys(env).some((k) => k.startsWith('OTEL_'))) return NO_TELEMETRY;
  const { parseTelemetryEnv } = await import('../config/telemetry-env.js');
  return startTelemetry(parseTelemetryEnv(env));
}

/** Runs the CLI with tracing as OTEL_* asks; flushes the spans at the end, within a deadline. */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let telemetry: Telemetry;
  try {
    telemetry = await telemetryFor(env);
  } catch (e) {
    const { code, message } = exitFor(e);
    if (message !== null) process.stderr.write(`error: ${message}\n`);
    return code;
  }
  try {
    const { main } = await import('./main.js');
    return await main(argv);
  } finally {
    // Every command has closed what it opened by now; the last spans (its shutdown's) go out too.
    await telemetry.shutdown();
  }
}

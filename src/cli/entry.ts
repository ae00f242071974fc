/**
 * The process entry (bin/gateway-ingest.js, dev-entry.ts): tracing first, then the CLI. The CLI's
 * modules are imported only once tracing has started, since the PostgreSQL instrumentation can only
 * patch `pg` before its first import (telemetry/sdk.ts); with tracing off nothing waits on it.
 */
import { parseTelemetryEnv } from '../config/telemetry-env.js';
import { startTelemetry, type Telemetry } from '../telemetry/start.js';
import { exitFor } from './exit.js';

/** Runs the CLI with tracing as OTEL_* asks; flushes the spans at the end, within a deadline. */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let telemetry: Telemetry;
  try {
    telemetry = await startTelemetry(parseTelemetryEnv(env));
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

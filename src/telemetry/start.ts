/**
 * Starts tracing as the OTEL_* variables ask (config/telemetry-env.ts). Off, the default, nothing
 * of the SDK is loaded: the spans the product makes (telemetry/tracing.ts) go to the no-op tracer
 * of `@opentelemetry/api`. On, the SDK is imported here, dynamically, and nowhere else.
 */
import type { TelemetrySettings } from '../config/telemetry-env.js';
import type { Telemetry } from './sdk.js';

export type { Telemetry } from './sdk.js';

export const NO_TELEMETRY: Telemetry = {
  enabled: false,
  shutdown: () => Promise.resolve(),
};

export async function startTelemetry(settings: TelemetrySettings): Promise<Telemetry> {
  if (settings.exporters.length === 0) return NO_TELEMETRY;
  const sdk = await import('./sdk.js');
  return sdk.startSdk({
    serviceName: settings.serviceName,
    processors: await sdk.processorsFor(settings),
    diagLogLevel: settings.diagLogLevel,
  });
}

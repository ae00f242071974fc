/**
 * The OpenTelemetry variables, read as the OpenTelemetry Node SDK reads them, but parsed once here:
 * tracing is on only when OTEL_TRACES_EXPORTER names an exporter. Unset (or `none`), no SDK is
 * loaded at all. Read by the CLI entry before anything else loads (see cli/entry.ts).
 */
import * as z from 'zod';
import { ConfigError } from '../errors.js';
import { present, urlWithScheme } from './env.js';

export const DEFAULT_SERVICE_NAME = 'gateway-ingest';
/** The OTLP/HTTP default of the specification: a collector on this machine. */
export const DEFAULT_OTLP_TRACES_URL = 'http://localhost:4318/v1/traces';

export type TraceExporterName = 'otlp' | 'console';
export type OtlpProtocol = 'http/protobuf' | 'http/json';

const DIAG_LEVELS = ['none', 'error', 'warn', 'info', 'debug', 'verbose', 'all'] as const;
export type DiagLevelName = (typeof DIAG_LEVELS)[number];

export interface TelemetrySettings {
  /** Empty: tracing is off and no SDK is loaded. */
  exporters: TraceExporterName[];
  serviceName: string;
  otlp: { url: string; protocol: OtlpProtocol };
  /** OTEL_LOG_LEVEL: what the SDK says of its own troubles (a collector that does not answer), on stderr. */
  diagLogLevel: DiagLevelName;
}

/** `otlp`, `console`, `none`, or a comma-separated list of them, as the SDK takes it. */
const exporterList = z
  .string()
  .transform((value) => value.split(',').map((name) => name.trim().toLowerCase()))
  .pipe(
    z.array(
      z.enum(['otlp', 'console', 'none'], {
        error: 'must be otlp, console or none (or a comma-separated list of them); zipkin and jaeger are not bundled',
      }),
    ),
  )
  .transform((names) => [...new Set(names.filter((n): n is TraceExporterName => n !== 'none'))]);

const protocol = z.enum(['http/protobuf', 'http/json'], {
  error: 'must be http/protobuf or http/json (grpc is not bundled: point at the collector OTLP/HTTP port, 4318)',
});

const otlpUrl = urlWithScheme(['http:', 'https:'], 'http://collector:4318');

const telemetrySchema = z.object({
  OTEL_SDK_DISABLED: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
  OTEL_TRACES_EXPORTER: exporterList.optional(),
  OTEL_SERVICE_NAME: z.string().trim().min(1).max(255).default(DEFAULT_SERVICE_NAME),
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl.optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol.optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol.optional(),
  OTEL_LOG_LEVEL: z
    .string()
    .transform((v) => v.toLowerCase())
    .pipe(z.enum(DIAG_LEVELS, { error: `must be one of ${DIAG_LEVELS.join(', ')}` }))
    .optional(),
});

/**
 * The specification's rule: the signal-specific endpoint is used as given, the general one is a base
 * to which `v1/traces` is appended.
 */
function tracesUrl(tracesEndpoint: string | undefined, endpoint: string | undefined): string {
  if (tracesEndpoint !== undefined) return tracesEndpoint;
  if (endpoint === undefined) return DEFAULT_OTLP_TRACES_URL;
  const base = new URL(endpoint);
  base.pathname = `${base.pathname.replace(/\/+$/, '')}/v1/traces`;
  return base.toString();
}

export function parseTelemetryEnv(env: NodeJS.ProcessEnv): TelemetrySettings {
  const parsed = telemetrySchema.safeParse(present(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0])}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    exporters: e.OTEL_SDK_DISABLED === 'true' ? [] : (e.OTEL_TRACES_EXPORTER ?? []),
    serviceName: e.OTEL_SERVICE_NAME,
    otlp: {
      url: tracesUrl(e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, e.OTEL_EXPORTER_OTLP_ENDPOINT),
      protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    },
    diagLogLevel: e.OTEL_LOG_LEVEL ?? 'none',
  };
}

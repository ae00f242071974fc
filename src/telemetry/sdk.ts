/**
 * The OpenTelemetry SDK, loaded by telemetry/start.ts only when tracing is on: nothing else may
 * import this module, or every run would load the SDK.
 *
 * The PostgreSQL instrumentation patches `pg` as it is required: the SDK must start before the first
 * import of `pg`, which is why the CLI entry starts it before it loads any command (cli/entry.ts).
 * No ESM loader hook is needed: `pg` is CommonJS, and its entry requires `./client` and `pg-pool`
 * with CommonJS `require`, which is where the instrumentation hooks in, even when `pg` itself is
 * imported from ESM. undici reports its requests on diagnostics channels: no patch, no order.
 */
import {
  context,
  diag,
  DiagLogLevel,
  propagation,
  trace,
  type DiagLogFunction,
  type DiagLogger,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { DiagLevelName, TelemetrySettings } from '../config/telemetry-env.js';
import { settledWithin } from '../deadline.js';
import { createLog } from '../log.js';

/** How long the spans still buffered get to reach the collector at exit: a collector away must not hold the process. */
export const FLUSH_DEADLINE_MS = 3_000;

const DIAG_LEVEL: Record<DiagLevelName, DiagLogLevel> = {
  none: DiagLogLevel.NONE,
  error: DiagLogLevel.ERROR,
  warn: DiagLogLevel.WARN,
  info: DiagLogLevel.INFO,
  debug: DiagLogLevel.DEBUG,
  verbose: DiagLogLevel.VERBOSE,
  all: DiagLogLevel.ALL,
};

/**
 * What the SDK says of itself (an export the collector refused, a span dropped) as JSON lines on
 * stderr like every other log line; OTEL_LOG_LEVEL filters them.
 */
function diagLog(): DiagLogger {
  const log = createLog('trace').child({ component: 'opentelemetry' });
  const at =
    (write: (fields: object, message: string) => void): DiagLogFunction =>
    (message, ...args) =>
      write({ args: args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : a)) }, message);
  return {
    error: at((f, m) => log.error(f, m)),
    warn: at((f, m) => log.warn(f, m)),
    info: at((f, m) => log.info(f, m)),
    debug: at((f, m) => log.debug(f, m)),
    verbose: at((f, m) => log.trace(f, m)),
  };
}

/** The exporters the settings name, each behind its processor; the OTLP exporter of the protocol asked for only. */
export async function processorsFor(settings: TelemetrySettings): Promise<SpanProcessor[]> {
  const processors: SpanProcessor[] = [];
  for (const name of settings.exporters) {
    if (name === 'console') {
      processors.push(new SimpleSpanProcessor(new ConsoleSpanExporter()));
      continue;
    }
    // Headers, timeout, compression and certificates come from the OTEL_EXPORTER_OTLP_* variables,
    // read by the exporter.
    const { OTLPTraceExporter } =
      settings.otlp.protocol === 'http/json'
        ? await import('@opentelemetry/exporter-trace-otlp-http')
        : await import('@opentelemetry/exporter-trace-otlp-proto');
    processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.otlp.url })));
  }
  return processors;
}

/** Tracing as the process holds it: `shutdown` flushes what is buffered, within its deadline, and unregisters. */
export interface Telemetry {
  readonly enabled: boolean;
  shutdown(deadlineMs?: number): Promise<void>;
}

export interface SdkOptions {
  serviceName: string;
  processors: SpanProcessor[];
  diagLogLevel?: DiagLevelName;
}

/**
 * Registers the tracer provider, the context manager (spans follow async calls), the W3C propagator
 * (what carries a trace into a BullMQ job) and the instrumentations. Statements and HTTP requests
 * are traced only under a span of ours or of a job: the pollers' statements make no traces.
 */
export function startSdk(options: SdkOptions): Telemetry {
  if (options.diagLogLevel && options.diagLogLevel !== 'none')
    diag.setLogger(diagLog(), DIAG_LEVEL[options.diagLogLevel]);
  // OTEL_RESOURCE_ATTRIBUTES (deployment.environment, ...) is read by the SDK's own detector.
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': options.serviceName }));
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: options.processors,
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  trace.setGlobalTracerProvider(provider);
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // Statement text only: bound values are not recorded.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      // No header is recorded (the key travels in one); the URL holds none.
      new UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  });
  return {
    enabled: true,
    async shutdown(deadlineMs = FLUSH_DEADLINE_MS) {
      // The exporter retries a collector that refuses or does not answer: the deadline ends that.
      if (!(await settledWithin(provider.shutdown(), deadlineMs)))
        createLog('warn').warn(
          { deadlineMs },
          'spans not all exported by the deadline: does the OTLP collector answer? (OTEL_LOG_LEVEL=warn says more)',
        );
      unregister();
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    },
  };
}

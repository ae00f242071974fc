import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_OTLP_TRACES_URL, parseTelemetryEnv } from '../../src/config/telemetry-env.js';
import { ConfigError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { NO_TELEMETRY, startTelemetry } from '../../src/telemetry/start.js';

describe('parseTelemetryEnv', () => {
  it('is off when OTEL_TRACES_EXPORTER is unset, empty or none', () => {
    for (const env of [{}, { OTEL_TRACES_EXPORTER: '' }, { OTEL_TRACES_EXPORTER: 'none' }]) {
      expect(parseTelemetryEnv(env)).toEqual({
        exporters: [],
        serviceName: 'gateway-ingest',
        otlp: { url: DEFAULT_OTLP_TRACES_URL, protocol: 'http/protobuf' },
        diagLogLevel: 'none',
      });
    }
  });

  it('appends v1/traces to the general endpoint and takes the traces endpoint as given', () => {
    const general = parseTelemetryEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' });
    expect(general.exporters).toEqual(['otlp']);
    expect(general.otlp.url).toBe('http://c:4318/v1/traces');
    const based = parseTelemetryEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c/otel' });
    expect(based.otlp.url).toBe('https://c/otel/v1/traces');
    const exact = parseTelemetryEnv({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:9999/custom',
    });
    expect(exact.otlp.url).toBe('http://c:9999/custom');
  });

  it('reads the list, the protocol, the service name and the switch that turns it all off', () => {
    const s = parseTelemetryEnv({
      OTEL_TRACES_EXPORTER: 'otlp, Console,none,otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'ingest-eu',
      OTEL_LOG_LEVEL: 'WARN',
    });
    expect(s).toMatchObject({
      exporters: ['otlp', 'console'],
      serviceName: 'ingest-eu',
      otlp: { protocol: 'http/json' },
      diagLogLevel: 'warn',
    });
    expect(parseTelemetryEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }).exporters).toEqual([]);
  });

  it('refuses what it cannot honour, naming the variable', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ OTEL_TRACES_EXPORTER: 'zipkin' }, /OTEL_TRACES_EXPORTER: must be otlp, console or none/],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /OTEL_EXPORTER_OTLP_PROTOCOL: .*grpc is not bundled/],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT: /],
      [{ OTEL_SDK_DISABLED: 'yes' }, /OTEL_SDK_DISABLED: must be true or false/],
    ];
    for (const [env, message] of cases) {
      expect(() => parseTelemetryEnv(env)).toThrow(ConfigError);
      expect(() => parseTelemetryEnv(env)).toThrow(message);
    }
  });
});

describe('tracing off', () => {
  it('starts nothing: a no-op handle, and spans that record nothing', async () => {
    const telemetry = await startTelemetry(parseTelemetryEnv({}));
    expect(telemetry).toBe(NO_TELEMETRY);
    expect(telemetry.enabled).toBe(false);
    const span = trace.getTracer('test').startSpan('nothing');
    expect(span.isRecording()).toBe(false);
    span.end();
    await telemetry.shutdown();
  });

  const dir = mkdtempSync(join(tmpdir(), 'gi-telemetry-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * Every module the CLI entry loads, as a module hook registered before it sees them. The hook
   * writes each one down synchronously, so the list is whole when the process ends.
   */
  function modulesLoaded(name: string, env: Record<string, string>): string[] {
    const file = join(dir, `${name}.txt`);
    const hook = [
      "import { appendFileSync } from 'node:fs';",
      'let file;',
      'export function initialize(data) { file = data.file; }',
      "export async function load(url, context, next) { appendFileSync(file, url + '\\n'); return next(url, context); }",
    ].join('\n');
    const register = [
      "import { register } from 'node:module';",
      `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)}, { data: { file: ${JSON.stringify(file)} } });`,
    ].join('\n');
    // The variables of the test's own environment are left out, so that only `env` decides.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
    const run = spawnSync(
      process.execPath,
      ['--import', `data:text/javascript,${encodeURIComponent(register)}`, 'bin/gateway-ingest.js', '--version'],
      { cwd: packageRoot, env: { ...inherited, ...env }, encoding: 'utf8', timeout: 30_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    return readFileSync(file, 'utf8').trim().split('\n');
  }

  const sdkModules = (urls: string[]) =>
    urls.filter((u) => /node_modules\/@opentelemetry\/(?!api\/)/.test(u) || u.includes('/dist/telemetry/sdk.js'));

  it('loads no OpenTelemetry SDK module when OTEL_TRACES_EXPORTER is unset', () => {
    const loaded = modulesLoaded('off', {});
    // The run went through the CLI (the pure-JS packages it needs are bundled into dist/; the test
    // below shows that the check sees node_modules when they load).
    expect(loaded.some((u) => u.endsWith('/dist/cli/main.js'))).toBe(true);
    expect(sdkModules(loaded)).toEqual([]);
  });

  it('loads the SDK when an exporter is asked for (the same check, seeing it)', () => {
    const loaded = sdkModules(modulesLoaded('on', { OTEL_TRACES_EXPORTER: 'console' }));
    expect(loaded.some((u) => u.includes('node_modules/@opentelemetry/sdk-trace-base/'))).toBe(true);
    expect(loaded.some((u) => u.includes('node_modules/@opentelemetry/instrumentation-pg/'))).toBe(true);
  });
});

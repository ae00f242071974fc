import { z } from 'zod';

export const DEFAULT_DATABASE_URL = 'postgres://postgres:postgres@127.0.0.1:5432/gateway_ingest';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const intFromEnv = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const urlWithScheme = (schemes: string[]) =>
  z.url().refine((u) => schemes.includes(new URL(u).protocol), {
    message: `must be a URL with scheme ${schemes.join(' or ')}`,
  });

const envSchema = z.object({
  DATABASE_URL: urlWithScheme(['postgres:', 'postgresql:']).default(DEFAULT_DATABASE_URL),
  REDIS_URL: urlWithScheme(['redis:', 'rediss:']).default(DEFAULT_REDIS_URL),
  GATEWAY_BASE_URL: urlWithScheme(['http:', 'https:']).optional(),
  MARKET_KEY: z.string().min(1).optional(),
  GATEWAY_AUTH_HEADER: z.enum(['authorization', 'x-api-key']).default('authorization'),
  GATEWAY_TIMEOUT_MS: intFromEnv(1, 600_000).default(30_000),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 characters of letters, digits, _ . -')
    .default('gateway-ingest'),
  WORKER_CONCURRENCY: intFromEnv(1, 256).default(4),
  HTTP_PORT: intFromEnv(0, 65_535).default(9464),
  JOB_ATTEMPTS: intFromEnv(1, 100).default(8),
  RETRY_BASE_DELAY_MS: intFromEnv(1, 3_600_000).default(2_000),
  SHUTDOWN_DEADLINE_MS: intFromEnv(0, 3_600_000).default(30_000),
  TRUNCATION_VERDICT_TTL_MS: intFromEnv(0, 30 * 86_400_000).default(3_600_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface ResolvedEnv {
  databaseUrl: string;
  redisUrl: string;
  gateway: {
    baseUrl: string | null;
    /** Kept out of every log line, row and job payload; only the HTTP client sees it. */
    key: string | null;
    authHeader: 'authorization' | 'x-api-key';
    timeoutMs: number;
  };
  queuePrefix: string;
  workerConcurrency: number;
  httpPort: number;
  jobAttempts: number;
  retryBaseDelayMs: number;
  shutdownDeadlineMs: number;
  /** How long a probe's finding on truncation order is trusted; 0 probes in every window. */
  truncationVerdictTtlMs: number;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Empty strings count as unset, as they do in most shells' `VAR=` idiom. */
function present(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''),
  );
}

export function parseEnv(env: NodeJS.ProcessEnv): ResolvedEnv {
  const parsed = envSchema.safeParse(present(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    gateway: {
      baseUrl: e.GATEWAY_BASE_URL?.replace(/\/+$/, '') ?? null,
      key: e.MARKET_KEY ?? null,
      authHeader: e.GATEWAY_AUTH_HEADER,
      timeoutMs: e.GATEWAY_TIMEOUT_MS,
    },
    queuePrefix: e.QUEUE_PREFIX,
    workerConcurrency: e.WORKER_CONCURRENCY,
    httpPort: e.HTTP_PORT,
    jobAttempts: e.JOB_ATTEMPTS,
    retryBaseDelayMs: e.RETRY_BASE_DELAY_MS,
    shutdownDeadlineMs: e.SHUTDOWN_DEADLINE_MS,
    truncationVerdictTtlMs: e.TRUNCATION_VERDICT_TTL_MS,
    logLevel: e.LOG_LEVEL,
  };
}

/** A URL with any password replaced, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable url>';
  }
}

import * as z from 'zod';
import { ConfigError } from '../errors.js';

export const DEFAULT_DATABASE_URL = 'postgres://postgres:postgres@127.0.0.1:5432/gateway_ingest';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const intFromEnv = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(min).max(max));

/**
 * A URL check that never throws: an unparseable value becomes one issue naming what is wrong. The
 * value itself is not echoed, since a URL that fails to parse cannot have its password redacted.
 */
export const urlWithScheme = (schemes: string[], example: string) =>
  z.string().superRefine((value, ctx) => {
    if (!URL.canParse(value)) {
      ctx.addIssue({ code: 'custom', message: `is not a valid absolute URL (expected e.g. ${example})` });
    } else if (!schemes.includes(new URL(value).protocol)) {
      ctx.addIssue({ code: 'custom', message: `must be a URL with scheme ${schemes.join(' or ')} (e.g. ${example})` });
    }
  });

/**
 * Characters an HTTP header value may hold (RFC 9110 5.5: visible ASCII, space, tab, obs-text);
 * anything else would be refused by the HTTP client mid-run or, worse, split the header.
 */
function headerValueProblem(value: string): string | null {
  const bad = [...value].find((ch) => !/^[\t\x20-\x7e\x80-\xff]$/.test(ch));
  if (bad !== undefined) {
    const code = `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    return (
      `contains a character not allowed in an HTTP header value (${code}: control characters, line breaks ` +
      'and characters outside Latin-1 are refused)'
    );
  }
  // The header value is trimmed on the wire, so the gateway would see a different key.
  if (/^[\t ]|[\t ]$/.test(value)) return 'starts or ends with whitespace, which HTTP strips from header values';
  return null;
}

/** Only the problem is reported, never the key or any part of it. */
const marketKey = z.string().superRefine((value, ctx) => {
  const problem = headerValueProblem(value);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
});

const flagFromEnv = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');

export interface RedisNodeAddress {
  host: string;
  port: number;
}

/** `host:port`, `host` (port 6379) or `[v6]:port`; the brackets are not part of the host ioredis dials. */
const NODE_ADDRESS = /^(?:\[(?<v6>[0-9A-Fa-f:.]+)\]|(?<host>[A-Za-z0-9.-]+))(?::(?<port>\d{1,5}))?$/;

/** REDIS_CLUSTER_NODES: comma-separated startup nodes, each checked on its own; duplicates are dropped. */
const clusterNodes = z.string().transform((value, ctx): RedisNodeAddress[] => {
  const nodes = new Map<string, RedisNodeAddress>();
  for (const item of value.split(',').map((s) => s.trim())) {
    const m = NODE_ADDRESS.exec(item);
    const port = Number(m?.groups?.['port'] ?? 6379);
    if (m === null || port < 1 || port > 65_535) {
      ctx.addIssue({ code: 'custom', message: `"${item}" is not host:port (e.g. 10.0.0.1:6379,10.0.0.2:6379)` });
      continue;
    }
    const host = m.groups?.['v6'] ?? m.groups?.['host'] ?? '';
    nodes.set(`${host}|${port}`, { host, port });
  }
  return [...nodes.values()];
});

/** Characters of a prefix; at most one `{tag}` among them, whose inside names the cluster hash slot. */
const PREFIX_CHARS = '[A-Za-z0-9_.-]';
const QUEUE_PREFIX_PATTERN = new RegExp(`^${PREFIX_CHARS}*(?:\\{${PREFIX_CHARS}+\\})?${PREFIX_CHARS}*$`);
const HASH_TAG = /\{[^{}]+\}/;

/**
 * The BullMQ prefix on a Redis Cluster. BullMQ's scripts touch several keys of a queue at once, which a
 * cluster runs only when they hash to one slot: a prefix with a hash tag is kept as it is, any other
 * is wrapped whole in braces, so every key of every queue of the deployment hashes to the same slot.
 */
export function clusterQueuePrefix(prefix: string): string {
  return HASH_TAG.test(prefix) ? prefix : `{${prefix}}`;
}

const envSchema = z.object({
  DATABASE_URL: urlWithScheme(['postgres:', 'postgresql:'], 'postgres://user:password@host:5432/database').default(
    DEFAULT_DATABASE_URL,
  ),
  REDIS_URL: urlWithScheme(['redis:', 'rediss:'], 'redis://host:6379').default(DEFAULT_REDIS_URL),
  GATEWAY_BASE_URL: urlWithScheme(['http:', 'https:'], 'https://gateway.example.com').optional(),
  MARKET_KEY: marketKey.optional(),
  GATEWAY_AUTH_HEADER: z.enum(['authorization', 'x-api-key']).default('authorization'),
  GATEWAY_TIMEOUT_MS: intFromEnv(1, 600_000).default(30_000),
  GATEWAY_ALLOW_INSECURE_HTTP: flagFromEnv.default(false),
  REDIS_CLUSTER_NODES: clusterNodes.optional(),
  REDIS_USERNAME: z.string().optional(),
  REDIS_PASSWORD: z.string().optional(),
  REDIS_TLS: flagFromEnv.default(false),
  QUEUE_PREFIX: z
    .string()
    .max(64, 'must be at most 64 characters')
    .regex(
      QUEUE_PREFIX_PATTERN,
      'must be letters, digits, _ . - with at most one {hash tag} (non-empty) among them, ' +
        'e.g. gateway-ingest or {gateway-ingest}',
    )
    .default('gateway-ingest'),
  WORKER_CONCURRENCY: intFromEnv(1, 256).default(4),
  WINDOW_LANES: intFromEnv(1, 32).default(4),
  HTTP_PORT: intFromEnv(0, 65_535).default(9464),
  JOB_ATTEMPTS: intFromEnv(1, 100).default(8),
  RETRY_BASE_DELAY_MS: intFromEnv(1, 3_600_000).default(2_000),
  GATEWAY_OUTAGE_GRACE_MS: intFromEnv(0, 7 * 86_400_000).default(3_600_000),
  SHUTDOWN_DEADLINE_MS: intFromEnv(0, 3_600_000).default(30_000),
  DB_SILENCE_TIMEOUT_MS: intFromEnv(1_000, 600_000).default(15_000),
  REDIS_SILENCE_TIMEOUT_MS: intFromEnv(1_000, 600_000).default(15_000),
  GATEWAY_KNOWLEDGE_TTL_MS: intFromEnv(0, 30 * 86_400_000).default(3_600_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BILLED_CALLS_PER_DAY: intFromEnv(1, 2_147_483_647).optional(),
  DASHBOARD_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,}$/, 'must be at least 16 visible ASCII characters, no spaces')
    .optional(),
  CONFIRM_BILLED_CALLS: intFromEnv(0, 1_000_000_000).default(1_000),
  AUDIT_RETENTION_DAYS: intFromEnv(1, 36_500).default(400),
});

/** A Redis Cluster reached through its startup nodes (REDIS_CLUSTER_NODES); every node takes the same credentials. */
export interface RedisClusterSettings {
  nodes: RedisNodeAddress[];
  username: string | null;
  /** Never logged. */
  password: string | null;
  /** TLS to every node, verified against the system's CAs (NODE_EXTRA_CA_CERTS adds a private one). */
  tls: boolean;
}

export interface ResolvedEnv {
  databaseUrl: string;
  /** The single Redis; unused when `redisCluster` is set. */
  redisUrl: string;
  /** REDIS_CLUSTER_NODES and its REDIS_USERNAME, REDIS_PASSWORD, REDIS_TLS; null: the single Redis at `redisUrl`. */
  redisCluster: RedisClusterSettings | null;
  gateway: {
    baseUrl: string | null;
    /** Kept out of every log line, row and job payload; only the HTTP client sees it. */
    key: string | null;
    authHeader: 'authorization' | 'x-api-key';
    timeoutMs: number;
    /** Plain http:// to a host off this machine is allowed (the key would travel in clear). */
    allowInsecureHttp: boolean;
  };
  /** The BullMQ prefix: QUEUE_PREFIX as given on a single Redis, hash-tagged on a cluster (see clusterQueuePrefix). */
  queuePrefix: string;
  workerConcurrency: number;
  /** Calls one earthquake window may have in flight at once, on call slots no other window waits for. */
  windowLanes: number;
  httpPort: number;
  jobAttempts: number;
  retryBaseDelayMs: number;
  /** How long a partition rides out the gateway away (no answer, 5xx) past its JOB_ATTEMPTS failures in a row. */
  gatewayOutageGraceMs: number;
  shutdownDeadlineMs: number;
  /** A PostgreSQL connection that sends no byte this long while a statement waits is destroyed and replaced. */
  dbSilenceTimeoutMs: number;
  /** The same for Redis (above BullMQ's longest blocking wait, 10 s). */
  redisSilenceTimeoutMs: number;
  /** How long what was learned of the gateway's cap is trusted; 0: nothing is carried across windows. */
  gatewayKnowledgeTtlMs: number;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  /** Billed calls all workers together may make per UTC day; null: no cap (calls are still counted). */
  billedCallsPerDay: number | null;
  /** Bull Board's actions on the dashboard need it; null: the dashboard is read-only. Never logged. */
  dashboardToken: string | null;
  /** A backfill estimated above this many billed calls asks before enqueueing (--yes skips). */
  confirmBilledCalls: number;
  /** Audit rows older than this roll up into gateway_cost_rollup and are deleted. */
  auditRetentionDays: number;
}

/** Empty strings count as unset, as they do in most shells' `VAR=` idiom. */
export function present(env: NodeJS.ProcessEnv): Record<string, string> {
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
  // Credentials and TLS of a single Redis stay in REDIS_URL, as they always were: these three are
  // read only with REDIS_CLUSTER_NODES, so that a variable of the same name set for something else
  // never changes how an existing deployment connects.
  const redisCluster: RedisClusterSettings | null =
    e.REDIS_CLUSTER_NODES === undefined
      ? null
      : {
          nodes: e.REDIS_CLUSTER_NODES,
          username: e.REDIS_USERNAME ?? null,
          password: e.REDIS_PASSWORD ?? null,
          tls: e.REDIS_TLS,
        };
  return {
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisCluster,
    gateway: {
      baseUrl: e.GATEWAY_BASE_URL?.replace(/\/+$/, '') ?? null,
      key: e.MARKET_KEY ?? null,
      authHeader: e.GATEWAY_AUTH_HEADER,
      timeoutMs: e.GATEWAY_TIMEOUT_MS,
      allowInsecureHttp: e.GATEWAY_ALLOW_INSECURE_HTTP,
    },
    queuePrefix: redisCluster === null ? e.QUEUE_PREFIX : clusterQueuePrefix(e.QUEUE_PREFIX),
    workerConcurrency: e.WORKER_CONCURRENCY,
    windowLanes: e.WINDOW_LANES,
    httpPort: e.HTTP_PORT,
    jobAttempts: e.JOB_ATTEMPTS,
    retryBaseDelayMs: e.RETRY_BASE_DELAY_MS,
    gatewayOutageGraceMs: e.GATEWAY_OUTAGE_GRACE_MS,
    shutdownDeadlineMs: e.SHUTDOWN_DEADLINE_MS,
    dbSilenceTimeoutMs: e.DB_SILENCE_TIMEOUT_MS,
    redisSilenceTimeoutMs: e.REDIS_SILENCE_TIMEOUT_MS,
    gatewayKnowledgeTtlMs: e.GATEWAY_KNOWLEDGE_TTL_MS,
    logLevel: e.LOG_LEVEL,
    billedCallsPerDay: e.BILLED_CALLS_PER_DAY ?? null,
    dashboardToken: e.DASHBOARD_TOKEN ?? null,
    confirmBilledCalls: e.CONFIRM_BILLED_CALLS,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
  };
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and localhost: traffic that never leaves this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]') return true;
  // The URL parser has already normalised 127.1, 0x7f.0.0.1 and [::ffff:127.0.0.1] to these forms.
  return /^127\.\d+\.\d+\.\d+$/.test(host) || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host);
}

/** Why the gateway may not be called at this URL, or null: plain http off this machine sends the key in clear. */
export function insecureGatewayProblem(baseUrl: string, allowInsecureHttp: boolean): string | null {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' || allowInsecureHttp || isLoopbackHost(url.hostname)) return null;
  return (
    `GATEWAY_BASE_URL is plain http:// to ${url.host}, which is not this machine: MARKET_KEY would travel in clear. ` +
    'Use https://, or if the network is trusted pass --allow-insecure-http (or set GATEWAY_ALLOW_INSECURE_HTTP=1)'
  );
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

import { parseEnv, type ResolvedEnv } from '../config/env.js';
import { assertDbReachable, assertDbWritable, openDb, type DbHandle } from '../db/connection.js';

/** What a command's flags override in the environment. */
export interface EnvFlags {
  /** `--allow-insecure-http`: the same as GATEWAY_ALLOW_INSECURE_HTTP=1 for this run. */
  allowInsecureHttp?: boolean;
}

/** The only place that reads process.env: parsed once, into a resolved type. */
export function loadEnv(env: NodeJS.ProcessEnv = process.env, flags: EnvFlags = {}): ResolvedEnv {
  // The flag sets the variable before parsing, so the resolved env is the one source of truth.
  return parseEnv(flags.allowInsecureHttp ? { ...env, GATEWAY_ALLOW_INSECURE_HTTP: '1' } : env);
}

/** `writable`: the command runs workers, which write (`assertDbWritable`). */
export async function connectDb(env: ResolvedEnv, options: { writable?: boolean } = {}): Promise<DbHandle> {
  const handle = openDb(env.databaseUrl, { silenceTimeoutMs: env.dbSilenceTimeoutMs });
  try {
    await assertDbReachable(handle, env.databaseUrl);
    if (options.writable) await assertDbWritable(handle, env.databaseUrl);
  } catch (e) {
    await handle.close().catch(() => undefined);
    throw e;
  }
  return handle;
}

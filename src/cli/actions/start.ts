import { armShutdownDeadline } from '../shutdown.js';
import type { ResolvedEnv } from '../../config/env.js';
import { loadJobsFile, type ResolvedJobsFile } from '../../config/jobs-file.js';
import type { Log } from '../../log.js';
import { EXIT } from '../exit.js';
import { loadEnv, type EnvFlags } from '../runtime.js';
import { openSession, startSessionWorkers } from '../session.js';

/** Resolves on the first SIGINT or SIGTERM; later ones are reported, not obeyed, while draining. */
function firstStopSignal(onRepeat: (s: NodeJS.Signals) => void): { signal: Promise<NodeJS.Signals>; dispose(): void } {
  let first: ((s: NodeJS.Signals) => void) | null = null;
  const signal = new Promise<NodeJS.Signals>((resolve) => (first = resolve));
  let seen = false;
  const on = (s: NodeJS.Signals) => {
    if (seen) return onRepeat(s);
    seen = true;
    first?.(s);
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    signal,
    dispose() {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}

/** Connects and starts the service; on failure closes whatever was opened before rethrowing. */
async function openService(file: ResolvedJobsFile, env: ResolvedEnv) {
  const session = await openSession(env, { needGateway: true });
  try {
    // Loaded here: the service (HTTP, Bull Board, metrics) weighs on every other command's memory.
    const { startService } = await import('../../service/service.js');
    const service = await startService(
      { ...session, startWorkers: (observer) => startSessionWorkers(session, observer) },
      file,
      {
        dashboardToken: env.dashboardToken,
        budget: { billedCallsPerDay: env.billedCallsPerDay },
      },
    );
    return { session, service };
  } catch (e) {
    await session.close();
    throw e;
  }
}

async function runService(configPath: string, flags: EnvFlags): Promise<void> {
  // Nothing is scheduled from a file that does not load: JobsFileError exits 2 before any connection.
  const file = await loadJobsFile(configPath);
  const env = loadEnv(process.env, flags);
  let log: Log | null = null;
  const stop = firstStopSignal((signal) => log?.warn({ signal }, 'already stopping: waiting for in-flight jobs'));
  try {
    const { session, service } = await openService(file, env);
    log = session.log;
    const onHup = () => void service.reload();
    process.on('SIGHUP', onHup);
    log.info({ config: configPath, prefix: env.queuePrefix, concurrency: env.workerConcurrency }, 'service started');
    const signal = await stop.signal;
    armShutdownDeadline(env.shutdownDeadlineMs, EXIT.ok);
    log.info({ signal, deadlineMs: env.shutdownDeadlineMs }, 'stopping: finishing in-flight jobs');
    process.off('SIGHUP', onHup);
    const { cutOff } = await service.stop(env.shutdownDeadlineMs);
    await session.close();
    log.info({ cutOff }, cutOff ? 'stopped; jobs cut off at the deadline will be retried' : 'stopped');
  } finally {
    stop.dispose();
  }
}

/** `start`: the service until SIGTERM/SIGINT. */
export async function runStart(opts: { config: string; allowInsecureHttp?: boolean }): Promise<void> {
  await runService(opts.config, { allowInsecureHttp: opts.allowInsecureHttp });
  process.exitCode = EXIT.ok;
}

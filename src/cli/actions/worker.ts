/** `worker`: queue workers until SIGINT/SIGTERM, then in-flight jobs finished within the deadline. */
import { EXIT } from '../exit.js';
import { armShutdownDeadline } from '../shutdown.js';
import { loadEnv } from '../runtime.js';
import { openSession, startSessionWorkers } from '../session.js';

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (s: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(s);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

export async function runWorker(opts: { allowInsecureHttp?: boolean }): Promise<void> {
  const env = loadEnv(process.env, opts);
  const session = await openSession(env, { needGateway: true });
  const workers = startSessionWorkers(session);
  session.log.info({ concurrency: env.workerConcurrency, prefix: env.queuePrefix }, 'workers started');
  const signal = await untilSignal();
  armShutdownDeadline(env.shutdownDeadlineMs, EXIT.ok);
  session.log.info({ signal }, 'stopping: finishing in-flight jobs');
  const { cutOff } = await workers.close(env.shutdownDeadlineMs);
  await session.close();
  session.log.info({ cutOff }, 'stopped');
  process.exitCode = EXIT.ok;
}

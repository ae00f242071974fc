import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { alive, freePort, pollUntil, run, runOrThrow, sleep } from './host.js';

const OS_USER = 'postgres';

/** The newest installed server binaries: Debian keeps them out of PATH, under /usr/lib/postgresql/<v>/bin. */
function serverBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(a) - Number(b)).at(-1);
  if (newest === undefined) throw new Error(`no PostgreSQL server binaries under ${root} (initdb, pg_ctl)`);
  return join(root, newest, 'bin');
}

/** initdb refuses to run as root: as root, every server command runs as the postgres OS user. */
function asServerUser(bin: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [bin, args];
  return ['runuser', ['-u', OS_USER, '--', bin, ...args]];
}

function ownedTempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gi-faults-pg-'));
  if (process.getuid?.() === 0) {
    const uid = Number(
      readFileSync('/etc/passwd', 'utf8')
        .split('\n')
        .find((l) => l.startsWith(`${OS_USER}:`))
        ?.split(':')[2],
    );
    if (!Number.isInteger(uid))
      throw new Error(`running as root needs an OS user "${OS_USER}" to own the data directory`);
    chownSync(dir, uid, uid);
  }
  return dir;
}

export interface PrivatePostgres {
  port: number;
  /** A connection URL for database `name` on this server. */
  url(name: string): string;
  start(): Promise<void>;
  /** Fast shutdown: open sessions are ended, as an operator's `pg_ctl stop` does. */
  stop(): Promise<void>;
  /** SIGKILL of the postmaster: no shutdown at all. */
  kill(): Promise<void>;
  /** Stops, stays down for `downMs`, starts again and waits until it answers. */
  restart(downMs?: number): Promise<void>;
  destroy(): Promise<void>;
  log(): string;
}

async function answers(port: number): Promise<boolean> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
    connectionTimeoutMillis: 1_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function postmasterPid(data: string): number | null {
  const file = join(data, 'postmaster.pid');
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/**
 * A PostgreSQL cluster of this test's own, on a free port with trust auth, so that stopping it
 * never disturbs another test. fsync is off: nothing here survives a machine crash anyway.
 */
export async function createPostgres(): Promise<PrivatePostgres> {
  const bin = serverBinDir();
  const dir = ownedTempDir();
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const port = await freePort();
  const pgCmd = (tool: string, args: string[], timeoutMs?: number) =>
    runOrThrow(...asServerUser(join(bin, tool), args), timeoutMs);
  await pgCmd('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  // A test run cut short (a timeout, ^C) skips afterAll: the server must not outlive it.
  const orphanGuard = () => {
    const pid = postmasterPid(data);
    if (pid !== null && alive(pid)) process.kill(pid, 'SIGQUIT');
  };
  const self: PrivatePostgres = {
    port,
    url: (name) => `postgres://postgres@127.0.0.1:${port}/${name}`,
    async start() {
      await pgCmd('pg_ctl', ['-D', data, '-l', logFile, '-o', options, '-w', '-t', '60', 'start'], 90_000);
      if (!(await pollUntil(() => answers(port), 30_000)))
        throw new Error(`PostgreSQL on ${port} did not answer after start`);
    },
    async stop() {
      await pgCmd('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'], 90_000);
    },
    async kill() {
      const pid = postmasterPid(data);
      if (pid === null) return;
      process.kill(pid, 'SIGKILL');
      await pollUntil(async () => !alive(pid), 10_000);
      // Its backends notice the postmaster is gone and exit; the shared memory must be free before a restart.
      await sleep(500);
    },
    async restart(downMs = 0) {
      await self.stop();
      await sleep(downMs);
      await self.start();
    },
    async destroy() {
      process.off('exit', orphanGuard);
      if (postmasterPid(data) !== null)
        await run(...asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']));
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
  };
  process.once('exit', orphanGuard);
  await self.start();
  return self;
}

/**
 * A throwaway Redis Cluster on loopback: three masters, no replicas, in a temp directory, for tests
 * that run the product against a cluster. Nothing is persisted; stop() kills the servers and
 * removes the directory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import type { RedisClusterSettings } from '../../src/config/env.js';
import { loopbackRedisArgs } from './redis-server.js';

const BINARIES = ['redis-server', 'redis-cli'] as const;
/** A cluster node also listens on its port + 10,000 (the cluster bus). */
const BUS_OFFSET = 10_000;
const NODE_START_DEADLINE_MS = 10_000;
const CLUSTER_OK_DEADLINE_MS = 20_000;
const STOP_DEADLINE_MS = 5_000;
const POLL_MS = 50;

/** Why the cluster tests cannot run here, or null when both binaries are on PATH. */
export function missingClusterBinaries(): string | null {
  const missing = BINARIES.filter((bin) => spawnSync(bin, ['--version'], { stdio: 'ignore' }).error !== undefined);
  return missing.length === 0
    ? null
    : `${missing.join(' and ')} not on PATH (install Redis, e.g. apt-get install -y redis-server, which brings redis-cli)`;
}

export interface LocalCluster {
  nodes: Array<{ host: string; port: number }>;
  /** REDIS_CLUSTER_NODES for the product. */
  nodesVar: string;
  settings: RedisClusterSettings;
  /** A client of the test's own (not the product's), closed by stop(). */
  client: Cluster;
  stop(): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A loopback port whose cluster-bus companion is free too (both below 65,536). */
async function freeNodePort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if (taken.has(port) || taken.has(port + BUS_OFFSET)) continue;
    if ((await portFree(port)) && (await portFree(port + BUS_OFFSET))) return port;
  }
  throw new Error('no free loopback port pair for a cluster node');
}

async function pollUntil(what: string, deadlineMs: number, probe: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

async function ping(port: number): Promise<boolean> {
  const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, connectTimeout: 1_000 });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } finally {
    r.disconnect();
  }
}

async function clusterInfo(port: number): Promise<string> {
  const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, connectTimeout: 1_000 });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return String(await r.call('CLUSTER', 'INFO'));
  } finally {
    r.disconnect();
  }
}

interface Node {
  port: number;
  process: ChildProcess;
  exited: Promise<void>;
  output(): string;
}

function startNode(dir: string, port: number): Node {
  const child = spawn(
    'redis-server',
    loopbackRedisArgs(port, [
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      '--dir',
      dir,
      '--appendonly',
      'no',
      '--daemonize',
      'no',
    ]),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4_000)));
  child.stderr?.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { port, process: child, exited, output: () => out };
}

async function stopNode(node: Node): Promise<void> {
  if (node.process.exitCode !== null || node.process.signalCode !== null) return;
  node.process.kill('SIGTERM');
  const stopped = await Promise.race([
    node.exited.then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), STOP_DEADLINE_MS).unref()),
  ]);
  if (!stopped) {
    node.process.kill('SIGKILL');
    await node.exited;
  }
}

/** A node that answers PING; a port taken meanwhile by someone else is given up for another (a few times). */
async function startAnswering(dir: string, taken: Set<number>): Promise<Node> {
  for (let attempt = 1; ; attempt++) {
    const port = await freeNodePort(taken);
    taken.add(port).add(port + BUS_OFFSET);
    const node = startNode(dir, port);
    let died = false;
    void node.exited.then(() => (died = true));
    try {
      await pollUntil(`redis-server on port ${port}`, NODE_START_DEADLINE_MS, async () => {
        if (died) throw new Error(`redis-server on port ${port} exited:\n${node.output()}`);
        return ping(port);
      });
      return node;
    } catch (e) {
      await stopNode(node);
      if (!died || attempt >= 3) throw e;
    }
  }
}

/** Three masters on free loopback ports, slots split by `redis-cli --cluster create`, cluster_state:ok on all. */
export async function startLocalCluster(): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'gi-redis-cluster-'));
  const nodes: Node[] = [];
  const cleanup = async () => {
    await Promise.all(nodes.map(stopNode));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const taken = new Set<number>();
    for (let i = 0; i < 3; i++) nodes.push(await startAnswering(dir, taken));
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: CLUSTER_OK_DEADLINE_MS },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.stdout}${create.stderr}`);
    for (const n of nodes)
      await pollUntil(`cluster_state:ok on port ${n.port}`, CLUSTER_OK_DEADLINE_MS, async () =>
        (await clusterInfo(n.port)).includes('cluster_state:ok'),
      );
    const addressList = nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
    const client = new Cluster(addressList, { redisOptions: { connectTimeout: 2_000 } });
    client.on('error', () => undefined);
    // Answers once the slot map is loaded, so that client.nodes() lists every master.
    await client.ping();
    return {
      nodes: addressList,
      nodesVar: addresses.join(','),
      settings: { nodes: addressList, username: null, password: null, tls: false },
      client,
      async stop() {
        client.disconnect();
        await cleanup();
      },
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** Every key matching `pattern` on every master: SCAN answers for one node only. */
export async function clusterKeys(client: Cluster, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  for (const node of client.nodes('master')) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
  }
  return keys;
}

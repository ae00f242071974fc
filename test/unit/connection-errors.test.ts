import { describe, expect, it } from 'vitest';
import { isConnectionError, isTransientConflict } from '../../src/errors.js';
import { silentLog } from '../../src/log.js';
import { durable } from '../../src/worker/durable.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isConnectionError: an outage of our own PostgreSQL or Redis', () => {
  it('knows the network codes and the server codes of a connection lost or refused', () => {
    const network = ['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'];
    const unreachable = ['EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN'];
    for (const code of [...network, ...unreachable, '57P01', '57P03', '08006', '25006'])
      expect(isConnectionError(coded(code)), code).toBe(true);
  });

  it('knows a server out of resources: too many connections, disk full, out of memory', () => {
    for (const code of ['53300', '53100', '53200', '53400']) expect(isConnectionError(coded(code)), code).toBe(true);
    // Redis at maxmemory under noeviction refuses writes with a reply, not a code.
    expect(isConnectionError(new Error("OOM command not allowed when used memory > 'maxmemory'."))).toBe(true);
  });

  it('looks through the causes an error wraps, and at the messages drivers give without a code', () => {
    expect(isConnectionError(new Error('query failed', { cause: coded('ECONNREFUSED') }))).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionError(new Error('PostgreSQL connection silent for 15000 ms: destroyed'))).toBe(true);
  });

  it('is false for a wrong statement, a non-error, and a cause that is itself', () => {
    expect(isConnectionError(coded('42P01', 'relation "x" does not exist'))).toBe(false);
    expect(isConnectionError('ECONNREFUSED')).toBe(false);
    const loop = new Error('loop');
    Object.assign(loop, { cause: loop });
    expect(isConnectionError(loop)).toBe(false);
  });
});

describe('isTransientConflict: a transaction that lost to a concurrent one', () => {
  it('is a deadlock or a serialization failure, wrapped or not; nothing else', () => {
    expect(isTransientConflict(coded('40P01', 'deadlock detected'))).toBe(true);
    expect(isTransientConflict(new Error('Failed query: ...', { cause: coded('40001') }))).toBe(true);
    expect(isTransientConflict(coded('23505', 'duplicate key'))).toBe(false);
    expect(isTransientConflict(coded('ECONNRESET'))).toBe(false);
  });
});

describe('durable: a write of an answer already paid for', () => {
  const ctx = {};
  it('runs again at once when it lost to a concurrent transaction, and is not given up', async () => {
    let tries = 0;
    const write = () =>
      ++tries < 4 ? Promise.reject(coded('40P01', 'deadlock detected')) : Promise.resolve('written');
    await expect(durable(write, ctx, silentLog())).resolves.toBe('written');
    expect(tries).toBe(4);
  });

  it('throws any other error at once', async () => {
    let tries = 0;
    const write = () => (++tries, Promise.reject(coded('23505', 'duplicate key')));
    await expect(durable(write, ctx, silentLog())).rejects.toThrow('duplicate key');
    expect(tries).toBe(1);
  });
});

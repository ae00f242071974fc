import { describe, expect, it } from 'vitest';
import { isConnectionError } from '../../src/errors.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isConnectionError: an outage of our own PostgreSQL or Redis', () => {
  it('knows the network codes and the server codes of a connection lost or refused', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P03', '08006'])
      expect(isConnectionError(coded(code)), code).toBe(true);
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

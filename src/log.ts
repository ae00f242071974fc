import { pino, type Logger, type DestinationStream } from 'pino';

export type Log = Logger;

/**
 * Redaction is a second line of defence: the key is never put in a log object on purpose, but a
 * header object or an error carrying one must not leak it either.
 */
export function createLog(level: string, destination?: DestinationStream): Log {
  return pino(
    {
      level,
      base: { service: 'gateway-ingest' },
      redact: {
        paths: [
          'headers.authorization',
          'headers["x-api-key"]',
          '*.headers.authorization',
          '*.headers["x-api-key"]',
          'key',
          'marketKey',
          '*.key',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ dest: 2, sync: false }),
  );
}

export function silentLog(): Log {
  return pino({ level: 'silent' });
}

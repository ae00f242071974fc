import { CommanderError } from 'commander';
import { postgresRefusal, ServiceUnavailableError, UsageError } from '../errors.js';

/** Exit codes of every command: 0 success, 1 some work failed, 2 bad usage or invalid input. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

const HELP_CODES = new Set(['commander.helpDisplayed', 'commander.version', 'commander.help']);

/**
 * The one place errors become exit codes. Bad input (flags, config, data files) is 2 and changed
 * nothing; an unreachable service is 1 with its own hint; anything else is 1 with its stack.
 */
export function exitFor(e: unknown): { code: ExitCode; message: string | null } {
  // Help asked for (--help, `help`) is 0; help shown because no command was given is bad usage.
  if (e instanceof CommanderError)
    return { code: HELP_CODES.has(e.code) && e.exitCode === 0 ? EXIT.ok : EXIT.usage, message: null };
  if (e instanceof UsageError) return { code: EXIT.usage, message: e.message };
  if (e instanceof ServiceUnavailableError) return { code: EXIT.failed, message: e.message };
  const refused = postgresRefusal(e);
  if (refused !== null) return { code: EXIT.failed, message: refusalText(refused) };
  return { code: EXIT.failed, message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
}

/** What PostgreSQL said, not the statement's text: a privilege missing is named as such. */
function refusalText(r: { code: string; message: string }): string {
  const text = `PostgreSQL refused a statement: ${r.message} (SQLSTATE ${r.code})`;
  return r.code === '42501'
    ? `${text}. The user of DATABASE_URL lacks a privilege on gateway-ingest's tables: run it as the user that ` +
        'ran `gateway-ingest migrate` (the owner of its tables)'
    : text;
}

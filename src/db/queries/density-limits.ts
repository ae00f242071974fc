/**
 * check-config works offline: a server that does not answer within this is treated as absent. A
 * module of its own: the command's help names it, and must not load the database driver.
 */
export const DENSITY_CONNECT_TIMEOUT_MS = 2_000;

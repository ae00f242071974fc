import { execFile } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The commit the previous release was made from (CHANGELOG.md names it), read from the file beside the test. */
export const PREVIOUS_RELEASE = readFileSync(new URL('../previous-release.txt', import.meta.url), 'utf8').trim();

/** Written last into a built copy: a directory without it is a build that was cut off, and is made again. */
const READY_MARKER = '.gi-upgrade-ready';

const CLONE_TIMEOUT_MS = 120_000;
/** `npm ci` downloads what the cache lacks (the suite's own install filled it) and compiles dist/ through `prepare`. */
const INSTALL_TIMEOUT_MS = 300_000;

interface Bounded {
  cwd?: string;
  timeoutMs: number;
}

/** Runs a command to its end within `timeoutMs`; throws with its output when it fails or runs over. */
export function runBounded(file: string, args: string[], options: Bounded): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { cwd: options.cwd, timeout: options.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error === null) return resolve(String(stdout));
        const why = error.killed ? `killed after ${options.timeoutMs} ms` : `exited ${String(error.code)}`;
        const command = `${file} ${args.join(' ')} (in ${options.cwd ?? process.cwd()})`;
        reject(new Error(`${command} ${why}:\n${String(stderr)}${String(stdout)}`));
      },
    );
  });
}

/** The repository of the checkout running the tests: the previous release is cloned from it. */
async function repositoryRoot(): Promise<string> {
  const here = new URL('.', import.meta.url).pathname;
  return (await runBounded('git', ['rev-parse', '--show-toplevel'], { cwd: here, timeoutMs: 30_000 })).trim();
}

/**
 * The previous release checked out and installed (`npm ci` builds its dist/), cached in the temporary
 * folder under its commit, so that later runs skip the clone and install. Built beside the cache and
 * renamed into place, so a run cut off mid-install never leaves a half-built copy to be reused.
 */
export async function previousRelease(commit: string = PREVIOUS_RELEASE): Promise<string> {
  const dir = join(tmpdir(), `gi-upgrade-${commit}`);
  if (existsSync(join(dir, READY_MARKER))) return dir;
  rmSync(dir, { recursive: true, force: true });
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  try {
    const root = await repositoryRoot();
    await runBounded('git', ['clone', '--quiet', '--no-checkout', root, building], { timeoutMs: CLONE_TIMEOUT_MS });
    const inClone = { cwd: building, timeoutMs: CLONE_TIMEOUT_MS };
    // A clone takes branches and tags; the checkout's HEAD may be detached (CI), and the release is
    // among its ancestors.
    await runBounded('git', ['fetch', '--quiet', root, 'HEAD'], inClone);
    await runBounded('git', ['checkout', '--quiet', '--detach', commit], inClone);
    await runBounded('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: building,
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
    if (!existsSync(join(building, 'dist/cli/main.js'))) {
      throw new Error(`npm ci in ${building} built no dist/cli/main.js`);
    }
    writeFileSync(join(building, READY_MARKER), `${commit}\n`);
    try {
      renameSync(building, dir);
    } catch (e) {
      // Another run finished the same build first: its copy serves as well.
      if (!existsSync(join(dir, READY_MARKER))) throw e;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return dir;
}

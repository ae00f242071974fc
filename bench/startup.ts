/**
 * How long the CLI takes before it does anything: the median wall time and peak RSS of commands that
 * only print (`--version`, `--help`), against `node -e 0`. A script, not a test: it asserts nothing.
 *   npm run bench:startup -- [runs=15]
 */
import { spawnSync } from 'node:child_process';
import { packageRoot } from '../src/paths.js';

const runs = Number(process.argv[2] ?? 15);
const commands: Array<[string, string[]]> = [
  ['node -e 0', ['-e', '0']],
  ['--version', ['bin/gateway-ingest.js', '--version']],
  ['--help', ['bin/gateway-ingest.js', '--help']],
  ['backfill earthquakes --help', ['bin/gateway-ingest.js', 'backfill', 'earthquakes', '--help']],
  ['status --help', ['bin/gateway-ingest.js', 'status', '--help']],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

console.log('| command | median s | min s | max s | peak RSS MiB |\n|---|---|---|---|---|');
for (const [label, args] of commands) {
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    // GNU time prints the child's wall seconds and peak RSS (KiB) on stderr.
    const r = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, ...args], {
      cwd: packageRoot,
      encoding: 'utf8',
    });
    const [wall, kib] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
    times.push(wall!);
    rss.push(kib! / 1024);
  }
  console.log(
    `| ${label} | ${median(times).toFixed(2)} | ${Math.min(...times).toFixed(2)} | ${Math.max(...times).toFixed(2)} | ` +
      `${median(rss).toFixed(0)} |`,
  );
}

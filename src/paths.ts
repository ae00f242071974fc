import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root: the nearest folder above this module holding package.json. The module runs
 * from src/ (tsx, vitest) and from a chunk of the bundled dist/, at different depths.
 */
function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return `${dir}/`;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const packageRoot = findPackageRoot(dirname(fileURLToPath(import.meta.url)));
export const migrationsFolder = join(packageRoot, 'migrations/');

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's real USGS and World Bank files (data/README.md), from src/ and dist/ alike. */
export const dataFolder = fileURLToPath(new URL('../data/', import.meta.url));

export function bundledDataDir(): string {
  return dataFolder;
}

function listDir(sub: string, pattern: RegExp): string[] {
  const dir = join(dataFolder, sub);
  return readdirSync(dir)
    .filter((name) => pattern.test(name))
    .sort()
    .map((name) => join(dir, name));
}

/** Absolute paths of the bundled real USGS and World Bank files (data/), sorted by name. */
export function bundledDataPaths(): { earthquakeFiles: string[]; indicatorFiles: string[] } {
  return {
    earthquakeFiles: listDir('usgs', /\.(csv|geojson|json)$/i),
    indicatorFiles: listDir('worldbank', /\.csv$/i),
  };
}

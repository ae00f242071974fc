import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * This file is src/emulator/fixtures.ts under vitest/tsx and dist/emulator/fixtures.js when built:
 * two levels below the package root either way, and the package ships test/fixtures (see "files").
 */
const FIXTURES = new URL('../../test/fixtures/', import.meta.url);

export function bundledFixtureDir(): string {
  return fileURLToPath(FIXTURES);
}

function listDir(sub: string, pattern: RegExp): string[] {
  const dir = new URL(`${sub}/`, FIXTURES);
  return readdirSync(dir)
    .filter((name) => pattern.test(name))
    .sort()
    .map((name) => fileURLToPath(new URL(name, dir)));
}

/** Absolute paths of the real USGS and World Bank files, sorted by name. */
export function bundledFixturePaths(): { earthquakeFiles: string[]; indicatorFiles: string[] } {
  return {
    earthquakeFiles: listDir('usgs', /\.(csv|geojson|json)$/i),
    indicatorFiles: listDir('worldbank', /\.csv$/i),
  };
}

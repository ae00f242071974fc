import { fileURLToPath } from 'node:url';

/** The package root, from src/ (tsx, vitest) and dist/ (compiled) alike: both sit one level down. */
export const packageRoot = fileURLToPath(new URL('../', import.meta.url));
export const migrationsFolder = fileURLToPath(new URL('../migrations/', import.meta.url));

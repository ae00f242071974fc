// Runs the CLI from source without a build: node --import tsx src/cli/dev-entry.ts ...
import { run } from './entry.js';

process.exitCode = await run(process.argv);

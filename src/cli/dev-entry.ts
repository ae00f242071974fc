// Runs the CLI from source without a build: node --import tsx src/cli/dev-entry.ts ...
import { main } from './main.js';

process.exitCode = await main(process.argv);

// Runs the CLI from source (node --import tsx src/cli/dev-entry.ts ...): tests spawn it without a build.
import { main } from './main.js';

process.exitCode = await main(process.argv);

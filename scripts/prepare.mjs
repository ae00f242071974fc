// `npm ci` runs this. With the dev dependencies it builds dist/ (and the emulator's); a production
// install (`npm ci --omit=dev`) has no compiler, so it keeps the dist/ built before, or says how to
// get one, without failing the install.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { execSync } from 'node:child_process';

const require = createRequire(import.meta.url);
let hasCompiler = true;
try {
  require.resolve('typescript');
} catch {
  hasCompiler = false;
}
if (hasCompiler) {
  execSync('npm run build --silent', { stdio: 'inherit' });
} else if (!existsSync(new URL('../dist/cli/main.js', import.meta.url))) {
  process.stderr.write(
    'gateway-ingest: no dist/ and no TypeScript compiler (a production install): build first with `npm ci && npm run build`, then `npm ci --omit=dev` keeps dist/.\n',
  );
}

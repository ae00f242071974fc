/* global process, URL */
// `npm ci` runs this. A development install builds dist/ (and the emulator's). A production install
// (`npm ci --omit=dev`) has no compiler to rely on, so it keeps the dist/ built before, or says how
// to get one, without failing the install.
import { existsSync } from 'node:fs';
import { execSync } from 'node:child_process';

const omitted = (process.env.npm_config_omit ?? '').split(/[\s,]+/);
if (!omitted.includes('dev')) {
  execSync('npm run build --silent', { stdio: 'inherit' });
} else if (!existsSync(new URL('../dist/cli/main.js', import.meta.url))) {
  process.stderr.write(
    'gateway-ingest: a production install without dist/: build it first (`npm ci && npm run build`), then `npm ci --omit=dev` keeps it.\n',
  );
}

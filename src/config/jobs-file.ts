/** Kept so existing `config/jobs-file.js` imports stay valid; the code lives in ./jobs-file/. */
export * from './jobs-file/index.js';

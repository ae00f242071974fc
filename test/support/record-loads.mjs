// Loaded with `node --import`: records every module URL the process resolves into the file named
// by RECORD_LOADS, one per line, so that a test can tell what a command loaded.
import { register } from 'node:module';

register(new URL('./record-loads-hooks.mjs', import.meta.url), { data: { file: process.env.RECORD_LOADS } });

#!/usr/bin/env node
import { runEmulatorCli } from '../dist/index.js';

process.exitCode = await runEmulatorCli(process.argv.slice(2), 'gateway-emulator');

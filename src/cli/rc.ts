#!/usr/bin/env node
/** `rc`: the command-line client of svc (src/cli/rc/run.ts). */
import './node-version.js';
import { runRc } from './rc/run.js';

const code = await runRc(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(text.startsWith('\r') || text === '\n' ? text : `${text}\n`),
  write: (bytes) => new Promise((resolve, reject) => process.stdout.write(bytes, (error) => (error ? reject(error) : resolve()))),
  isTTY: process.stderr.isTTY === true,
});
process.exitCode = code;

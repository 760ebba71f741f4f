#!/usr/bin/env node
/** `rc`: the command-line client (its commands arrive with the admin API). */
console.error('rc: no commands are available in this build yet; see the README');
process.exitCode = 2;

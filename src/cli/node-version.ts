/**
 * Imported first by the commands: on a Node.js older than the one package.json's `engines` asks
 * for, they stop here with a clear message instead of failing later in some dependency.
 */
const requiredMajor = 22;
const major = Number(process.versions.node.split('.')[0]);
if (major < requiredMajor) {
  process.stderr.write(`svc: UnsupportedRuntime: Node.js ${requiredMajor} or newer is required, this is ${process.version} (${process.execPath}); install Node.js ${requiredMajor}, or use the single executable (npm run package), which carries its own\n`);
  process.exit(1);
}
export {};

/** The `svc-conformance` command of the standalone package: the black-box suites and `--compare`. */
import { main } from './cli.js';

process.exitCode = await main(process.argv.slice(2), 'svc-conformance');

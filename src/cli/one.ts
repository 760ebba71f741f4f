/**
 * The entry of the single executable (`npm run package`): the server's command (src/cli/svc.ts,
 * which also runs `svc rc ...`), or the client (src/cli/rc.ts) when the file is invoked under a
 * name ending in `rc` (the Debian package's `svc-rc` link).
 */
import { basename } from 'node:path';

const invokedAs = basename(process.argv0);
if (invokedAs === 'rc' || invokedAs.endsWith('-rc')) await import('./rc.js');
else await import('./svc.js');

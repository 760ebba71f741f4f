/** Where `npm run package` and `npm run package:deb` write (dist-package/, gitignored). */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));
export const packageDir = join(repoRoot, 'dist-package');
export const executablePath = join(packageDir, 'svc');

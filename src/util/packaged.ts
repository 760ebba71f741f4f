/**
 * The single executable (`npm run package`) carries its console files, its coding thread and its
 * version as embedded assets; these helpers read them. Outside the executable every helper answers
 * undefined and the callers fall back to the files of the checkout.
 */
import { createRequire } from 'node:module';

interface SeaApi {
  isSea(): boolean;
  getAsset(key: string): ArrayBuffer;
  getAssetKeys?(): string[];
}

let sea: SeaApi | undefined | null = null;

function seaApi(): SeaApi | undefined {
  if (sea !== null) return sea;
  try {
    const api = createRequire(process.execPath)('node:sea') as SeaApi;
    sea = api.isSea() ? api : undefined;
  } catch {
    sea = undefined;
  }
  return sea;
}

/** True inside the single executable. */
export function isPackaged(): boolean {
  return seaApi() !== undefined;
}

/** The bytes of an embedded asset, or undefined (not packaged, or no such asset). */
export function packagedAsset(name: string): Buffer | undefined {
  const api = seaApi();
  if (!api) return undefined;
  try {
    return Buffer.from(api.getAsset(name));
  } catch {
    return undefined;
  }
}

/** The names of the embedded console files (`console-ui/<name>` assets), from the asset index. */
export function packagedConsoleFiles(): { name: string; bytes: Buffer }[] | undefined {
  const index = packagedAsset('console-ui.json');
  if (!index) return undefined;
  const names = JSON.parse(index.toString('utf8')) as string[];
  return names.map((name) => ({ name, bytes: packagedAsset(`console-ui/${name}`)! }));
}

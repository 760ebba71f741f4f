/**
 * Real clients from Debian packages (awscli, rclone, s3cmd). A test that needs one skips with the
 * reason when it is missing, except under CI (CI=true), where a missing tool is a failure:
 * `.ci/run` installs them.
 */
import { execFileSync } from 'node:child_process';

export function toolPath(name: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Undefined when the tool is present; otherwise the skip reason (throws under CI). */
export function missingTool(name: string, debianPackage = name): string | undefined {
  if (toolPath(name)) return undefined;
  const reason = `'${name}' is not installed (Debian package ${debianPackage}; .ci/run installs it)`;
  if (process.env.CI) throw new Error(`CI requires ${reason}`);
  return reason;
}

/** Undefined when python3 can import the module; otherwise the skip reason (throws under CI). */
export function missingPythonModule(module: string, debianPackage: string): string | undefined {
  const reason = toolPath('python3') === undefined ? `'python3' is not installed (Debian package python3; .ci/run installs it)` : importFails(module) ? `python3 cannot import ${module} (Debian package ${debianPackage}; .ci/run installs it)` : undefined;
  if (reason && process.env.CI) throw new Error(`CI requires ${reason}`);
  return reason;
}

function importFails(module: string): boolean {
  try {
    execFileSync('python3', ['-c', `import ${module}`], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

/** Undefined when the npm package resolves; otherwise the skip reason (throws under CI). */
export async function missingNpmPackage(name: string): Promise<string | undefined> {
  try {
    await import(name);
    return undefined;
  } catch {
    const reason = `the npm package '${name}' is not installed (a devDependency: npm install installs it)`;
    if (process.env.CI) throw new Error(`CI requires ${reason}`);
    return reason;
  }
}

/**
 * Runs a client and returns its standard output; a failure throws with its output and error
 * stream, and `context()` (a server's recent logs, say) when given. A CA bundle from the
 * environment is left out: irrelevant over plain HTTP, it trips rclone's S3 client.
 */
export function runTool(command: string, args: string[], env: Record<string, string> = {}, context: () => string = () => ''): string {
  const { AWS_CA_BUNDLE: _bundle, ...inherited } = process.env;
  try {
    return execFileSync(command, args, { env: { ...inherited, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const failed = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}\n${context()}`);
  }
}

/** rclone's settings for a remote `svc:` (path-style S3 at `endpoint`), from the environment only; `extra` adds RCLONE_CONFIG_SVC_* settings. */
export function rcloneEnv(endpoint: string, credentials: { accessKeyId: string; secretAccessKey: string }, configFile: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    RCLONE_CONFIG_SVC_TYPE: 's3', RCLONE_CONFIG_SVC_PROVIDER: 'Other', RCLONE_CONFIG_SVC_ENDPOINT: endpoint,
    RCLONE_CONFIG_SVC_ACCESS_KEY_ID: credentials.accessKeyId, RCLONE_CONFIG_SVC_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    RCLONE_CONFIG_SVC_REGION: 'us-east-1', RCLONE_CONFIG_SVC_FORCE_PATH_STYLE: 'true', RCLONE_CONFIG: configFile,
    ...Object.fromEntries(Object.entries(extra).map(([name, value]) => [`RCLONE_CONFIG_SVC_${name}`, value])),
  };
}

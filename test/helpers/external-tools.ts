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

/**
 * What a svc deployment needs for the conformance suite's encryption checks to apply: a root key
 * for the built-in KMS, customer keys taken over plain HTTP (the harness's listeners speak HTTP on
 * loopback), and a named KMS key for the SSE-KMS checks (`--kms-key-id`).
 */
import { randomBytes } from 'node:crypto';
import { Target } from '../runner/check.js';

/** The named KMS key the SSE-KMS checks use. */
export const conformanceKmsKeyId = 'conf-kms';

/** The settings of every node: one root key for the deployment, made afresh for each. */
export function conformanceKmsEnv(): Record<string, string> {
  return { SVC_KMS_SECRET_KEY: `conf-root:${randomBytes(32).toString('base64')}`, SVC_KMS_ALLOW_INSECURE_SSEC: 'on' };
}

/** Creates the named key through the admin API of `endpoint`. */
export async function createConformanceKmsKey(endpoint: string, credentials: { accessKey: string; secretKey: string }): Promise<void> {
  const target = new Target({ endpoint, ...credentials, seed: 1 });
  const answer = await target.admin('POST', '/svc/admin/v4/kms/key/create', `key-id=${conformanceKmsKeyId}`);
  if (answer.status !== 200) throw new Error(`creating KMS key ${conformanceKmsKeyId} answered ${answer.status} ${JSON.stringify(answer.body)}`);
}

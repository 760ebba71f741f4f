/**
 * The AWS SDK's S3 client, loaded when a remote target or a tier is first used: a server with
 * neither, and every command-line run that starts it, does not pay for loading the SDK (the
 * module system keeps it once loaded).
 */
export type S3Sdk = typeof import('@aws-sdk/client-s3');

export function s3Sdk(): Promise<S3Sdk> {
  return import('@aws-sdk/client-s3');
}

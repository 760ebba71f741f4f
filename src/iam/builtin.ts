/**
 * The built-in policies every deployment has (the names S3 stores of this kind share). They
 * cannot be replaced or removed; users are attached to them by name like any other policy.
 */
import { validatePolicy, type Policy } from './policy.js';

const allS3 = ['arn:aws:s3:::*'];

const documents = {
  readonly: {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: ['s3:GetBucketLocation', 's3:GetObject', 's3:ListBucket', 's3:ListAllMyBuckets'], Resource: allS3 }],
  },
  writeonly: {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: allS3 }],
  },
  readwrite: {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: ['s3:*'], Resource: allS3 }],
  },
  consoleAdmin: {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: ['admin:*'], Resource: ['*'] },
      { Effect: 'Allow', Action: ['s3:*'], Resource: allS3 },
    ],
  },
} as const;

export type BuiltInPolicyName = keyof typeof documents;

export const builtInPolicyNames = Object.keys(documents) as BuiltInPolicyName[];

export function isBuiltInPolicy(name: string): name is BuiltInPolicyName {
  return Object.hasOwn(documents, name);
}

export function builtInPolicyDocument(name: BuiltInPolicyName): unknown {
  return documents[name];
}

export const builtInPolicies: ReadonlyMap<string, Policy> = new Map(builtInPolicyNames.map((name) => [name, validatePolicy(documents[name])]));

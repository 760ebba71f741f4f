/** Schemas of the bucket settings routes (routes-bucket-settings.ts), in the admin routes' form. */
import { boolean, integer, nullable, object, statusQuery, text } from '../api/admin/route-schema.js';
import { consoleSchema } from './api-schemas.js';

const bucketParams = object({ bucket: text('bucket name') });
const saved = object({ bucket: text('bucket'), setting: text('the setting'), saved: boolean('always true') });

/** What each setting's document is, as S3 takes it. */
const documents: Record<string, { what: string; example: string }> = {
  policy: { what: 'the bucket policy (JSON)', example: '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/public/*"}]}' },
  lifecycle: { what: 'the LifecycleConfiguration XML', example: '<LifecycleConfiguration><Rule><ID>old</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule></LifecycleConfiguration>' },
  cors: { what: 'the CORSConfiguration XML', example: '<CORSConfiguration><CORSRule><AllowedOrigin>https://example.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>' },
  tagging: { what: 'the Tagging XML', example: '<Tagging><TagSet><Tag><Key>team</Key><Value>web</Value></Tag></TagSet></Tagging>' },
  encryption: { what: 'the ServerSideEncryptionConfiguration XML', example: '<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>' },
  'object-lock': { what: 'the ObjectLockConfiguration XML', example: '<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>30</Days></DefaultRetention></Rule></ObjectLockConfiguration>' },
  'public-access-block': { what: 'the PublicAccessBlockConfiguration XML', example: '<PublicAccessBlockConfiguration><BlockPublicPolicy>true</BlockPublicPolicy></PublicAccessBlockConfiguration>' },
  notification: { what: 'the NotificationConfiguration XML', example: '<NotificationConfiguration/>' },
  replication: { what: 'the ReplicationConfiguration XML', example: '<ReplicationConfiguration><Role></Role><Rule><ID>to-dr</ID><Priority>1</Priority><Status>Enabled</Status><Filter><Prefix></Prefix></Filter><DeleteMarkerReplication><Status>Enabled</Status></DeleteMarkerReplication><ExistingObjectReplication><Status>Enabled</Status></ExistingObjectReplication><Destination><Bucket>arn:svc:replication::3f2a9c01d4e5b6a7:photos-copy</Bucket></Destination></Rule></ReplicationConfiguration>' },
};

export const settingsSchemas = {
  get: (name: string) =>
    consoleSchema('bucket settings', {
      summary: `The bucket's ${name} setting`,
      description: `${documents[name]!.what} as S3's Get handler answers it; null when none is set.`,
      querystring: statusQuery({}),
      params: bucketParams,
      response: object({ document: nullable(text(documents[name]!.what)) }),
      example: { params: { bucket: 'photos' }, response: { document: documents[name]!.example } },
    }),
  put: (name: string) =>
    consoleSchema('bucket settings', {
      summary: `Replace the bucket's ${name} setting`,
      description: `${documents[name]!.what}, judged by S3's own Put handler: a document it refuses is answered with S3's error (MalformedXML, MalformedPolicy, InvalidArgument, ...).`,
      querystring: statusQuery({}),
      params: bucketParams,
      body: object({ document: text(documents[name]!.what) }),
      response: saved,
      example: { params: { bucket: 'photos' }, body: { document: documents[name]!.example }, response: { bucket: 'photos', setting: name, saved: true } },
    }),
  remove: (name: string) =>
    consoleSchema('bucket settings', {
      summary: `Remove the bucket's ${name} setting`,
      description: "Through S3's own Delete handler.",
      querystring: statusQuery({}),
      params: bucketParams,
      response: saved,
      example: { params: { bucket: 'photos' }, response: { bucket: 'photos', setting: name, saved: true } },
    }),
  policyStatus: consoleSchema('bucket settings', {
    summary: 'Whether the bucket is public',
    description: "GetBucketPolicyStatus's verdict: the bucket policy, or a public ACL that counts, grants anyone access.",
    querystring: statusQuery({}),
    params: bucketParams,
    response: object({ bucket: text('bucket'), isPublic: boolean('anyone may reach something in the bucket') }),
    example: { params: { bucket: 'photos' }, response: { bucket: 'photos', isPublic: false } },
  }),
  contents: consoleSchema('bucket settings', {
    summary: 'What deleting the bucket would remove',
    description: 'Keys with a live newest version, every version and delete marker (counted up to 10,000 versions), and unfinished uploads (null without s3:ListBucketMultipartUploads).',
    querystring: statusQuery({}),
    params: bucketParams,
    response: object({
      bucket: text('bucket'),
      objects: integer('keys whose newest version is not a delete marker'),
      versions: integer('every version, delete markers included'),
      deleteMarkers: integer('delete markers'),
      capped: boolean('counting stopped at 10,000 versions'),
      uploads: nullable(integer('unfinished multipart uploads')),
    }),
    example: { params: { bucket: 'photos' }, response: { bucket: 'photos', objects: 0, versions: 3, deleteMarkers: 1, capped: false, uploads: 0 } },
  }),
};

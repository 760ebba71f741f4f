/**
 * The one error catalogue. Every code the service can answer with is listed here once,
 * with its HTTP status and a default message. Lower layers throw `SvcError` with a code;
 * the API layers map codes to wire responses through this table (S3 XML, admin JSON, rc exit).
 * `test/errors.test.ts` keeps this table, docs/errors.md and the thrown codes in step.
 */
export const errorCatalogue = {
  // S3 codes (AWS status codes)
  MalformedPOSTRequest: { httpStatus: 400, message: 'The body of your POST request is not well-formed multipart/form-data.' },
  CORSResponse: { httpStatus: 403, message: 'This CORS request is not allowed: no CORS rule of the bucket allows its origin, method and headers.' },
  NoSuchCORSConfiguration: { httpStatus: 404, message: 'The CORS configuration does not exist.' },
  InvalidTag: { httpStatus: 400, message: 'The tag set is not valid: at most 10 tags, unique keys of 1 to 128 characters, values of at most 256, no aws: prefix.' },
  ConditionalRequestConflict: { httpStatus: 409, message: 'A conflicting operation occurred while this conditional write was checked; retry it.' },
  InvalidPartNumber: { httpStatus: 416, message: 'The requested partnumber is not satisfiable.' },
  AuthorizationQueryParametersError: { httpStatus: 400, message: 'Error parsing the X-Amz-Credential parameter or another presigned URL parameter.' },
  AccessControlListNotSupported: { httpStatus: 400, message: 'The bucket does not allow ACLs: this server has one user, the owner, who holds FULL_CONTROL; grants to anyone else are refused.' },
  MalformedPolicy: { httpStatus: 400, message: 'The policy is not valid: it must be JSON with Version, Statement, Effect, Action, Resource and supported conditions.' },
  NoSuchBucketPolicy: { httpStatus: 404, message: 'The bucket policy does not exist.' },
  AccessDenied: { httpStatus: 403, message: 'Access Denied.' },
  BadDigest: { httpStatus: 400, message: 'The Content-MD5 or checksum you specified did not match what we received.' },
  BucketAlreadyExists: { httpStatus: 409, message: 'The requested bucket name is not available.' },
  BucketAlreadyOwnedByYou: { httpStatus: 409, message: 'Your previous request to create the named bucket succeeded and you already own it.' },
  BucketNotEmpty: { httpStatus: 409, message: 'The bucket you tried to delete is not empty.' },
  EntityTooLarge: { httpStatus: 400, message: 'Your proposed upload exceeds the maximum allowed object size.' },
  EntityTooSmall: { httpStatus: 400, message: 'Your proposed upload is smaller than the minimum allowed object size.' },
  InternalError: { httpStatus: 500, message: 'We encountered an internal error, please try again.' },
  InvalidAccessKeyId: { httpStatus: 403, message: 'The Access Key Id you provided does not exist in our records.' },
  InvalidArgument: { httpStatus: 400, message: 'Invalid Argument.' },
  InvalidBucketName: { httpStatus: 400, message: 'The specified bucket is not valid.' },
  InvalidDigest: { httpStatus: 400, message: 'The Content-MD5 you specified is not valid.' },
  InvalidObjectName: { httpStatus: 400, message: 'Object name contains unsupported characters or segments.' },
  InvalidPart: { httpStatus: 400, message: 'One or more of the specified parts could not be found.' },
  InvalidPartOrder: { httpStatus: 400, message: 'The list of parts was not in ascending order.' },
  InvalidRange: { httpStatus: 416, message: 'The requested range is not satisfiable.' },
  InvalidRequest: { httpStatus: 400, message: 'Invalid Request.' },
  InvalidStorageClass: { httpStatus: 400, message: 'The storage class you specified is not valid.' },
  KeyTooLongError: { httpStatus: 400, message: 'Your key is too long.' },
  MalformedXML: { httpStatus: 400, message: 'The XML you provided was not well-formed or did not validate against our published schema.' },
  MaxMessageLengthExceeded: { httpStatus: 400, message: 'Your request was too big.' },
  MethodNotAllowed: { httpStatus: 405, message: 'The specified method is not allowed against this resource.' },
  MissingContentLength: { httpStatus: 411, message: 'You must provide the Content-Length HTTP header.' },
  NoSuchBucket: { httpStatus: 404, message: 'The specified bucket does not exist.' },
  NoSuchKey: { httpStatus: 404, message: 'The specified key does not exist.' },
  NoSuchUpload: { httpStatus: 404, message: 'The specified multipart upload does not exist.' },
  NoSuchVersion: { httpStatus: 404, message: 'The specified version does not exist.' },
  NotImplemented: { httpStatus: 501, message: 'A header or operation you provided is not implemented.' },
  NotModified: { httpStatus: 304, message: 'Not Modified.' },
  PreconditionFailed: { httpStatus: 412, message: 'At least one of the preconditions you specified did not hold.' },
  RequestTimeout: { httpStatus: 400, message: 'Your socket connection to the server was not read from or written to within the timeout period.' },
  RequestTimeTooSkewed: { httpStatus: 403, message: 'The difference between the request time and the server\'s time is too large.' },
  SignatureDoesNotMatch: { httpStatus: 403, message: 'The request signature we calculated does not match the signature you provided.' },
  IncompleteBody: { httpStatus: 400, message: 'You did not provide the number of bytes specified by the Content-Length HTTP header.' },
  SlowDown: { httpStatus: 503, message: 'Please reduce your request rate.' },
  XAmzContentSHA256Mismatch: { httpStatus: 400, message: 'The provided x-amz-content-sha256 header does not match what was computed.' },

  // The specification's named errors
  ErasureReadQuorum: { httpStatus: 503, message: 'Read quorum could not be reached: fewer than K shards or metadata votes are available.' },
  ErasureWriteQuorum: { httpStatus: 503, message: 'Write quorum could not be reached: nothing was committed.' },
  PoolTopologyMismatch: { httpStatus: 500, message: 'The stored format differs from the configured drive count or set width; restore the original endpoints and set width.' },
  UnsupportedSnsdExpansion: { httpStatus: 500, message: 'A single-drive deployment cannot be expanded or turned into a multi-drive pool.' },

  // Admin API (JSON bodies { Code, Message, Resource, RequestId })
  InvalidQueryParameter: { httpStatus: 400, message: 'The query has an unknown, duplicate or malformed parameter.' },
  NoSuchPool: { httpStatus: 404, message: 'The pool does not exist: give its launch pattern, or its zero-based index with by-id=true.' },
  DuplicatePoolTarget: { httpStatus: 400, message: 'The same pool appears more than once in the batch.' },
  LastPoolCannotBeDecommissioned: { httpStatus: 409, message: 'Decommissioning these pools would leave no pool to hold the data.' },
  DecommissionInProgress: { httpStatus: 409, message: 'The pool is already queued or being decommissioned.' },
  DecommissionAlreadyCompleted: { httpStatus: 409, message: 'The pool was already decommissioned; remove it from the launch arguments.' },
  DecommissionNotCleared: { httpStatus: 409, message: 'The pool has a failed or canceled decommission; clear it first.' },
  NoActiveDecommission: { httpStatus: 409, message: 'The pool has no queued or active decommission to cancel.' },
  DecommissionNotClearable: { httpStatus: 409, message: 'Only a failed or canceled decommission without unresolved entries can be cleared.' },
  RebalanceInProgress: { httpStatus: 409, message: 'A rebalance is running; stop it first.' },
  DecommissionBlocksRebalance: { httpStatus: 409, message: 'A decommission is queued or running; rebalance cannot start.' },
  NoRebalanceRunning: { httpStatus: 409, message: 'No rebalance is running.' },
  FaultInjectionDisabled: { httpStatus: 403, message: 'Fault injection is off on this node (start it with SVC_FAULT_INJECTION=on).' },
  NoSuchDrive: { httpStatus: 404, message: 'No drive of this node has that path.' },
  HealAlreadyRunning: { httpStatus: 409, message: 'A heal of this path is already running.' },
  NoSuchHealSequence: { httpStatus: 404, message: 'No heal with this client token is known.' },
  RebalancePropagationFailed: { httpStatus: 503, message: 'Rebalance start did not reach every node; it was rolled back.' },

  NoSuchUser: { httpStatus: 404, message: 'The user does not exist.' },
  NoSuchPolicy: { httpStatus: 404, message: 'The policy does not exist: give a built-in policy (readonly, readwrite, writeonly, consoleAdmin) or one created earlier.' },
  PolicyIsBuiltIn: { httpStatus: 409, message: 'A built-in policy cannot be replaced.' },
  InvalidUserCredentials: { httpStatus: 400, message: 'The access key must be 3 to 128 characters of letters, digits and -_.=@, the secret key 8 to 128 characters, and neither may be the root access key.' },

  // Console API (same JSON shape as the admin API)
  ConsoleSignInRequired: { httpStatus: 401, message: 'Sign in to the console first (no valid session cookie).' },
  ConsoleSignInFailed: { httpStatus: 401, message: 'The access key or secret key is wrong.' },
  InvalidCsrfToken: { httpStatus: 403, message: 'The request lacks the session\'s CSRF token (x-csrf-token header); nothing was changed.' },
  TooManySignInAttempts: { httpStatus: 429, message: 'Too many failed sign-ins from this address; wait and try again.' },
  ConfirmationRequired: { httpStatus: 400, message: 'This action deletes data: confirm it by typing the name asked for.' },

  // Drive-level and internal codes (never sent to S3 clients as-is; mapped or wrapped)
  DriveOffline: { httpStatus: 503, message: 'The drive is offline.' },
  DriveFull: { httpStatus: 507, message: 'The drive has no space left.' },
  DriveFaulty: { httpStatus: 500, message: 'The drive returned an I/O error.' },
  DriveAccessDenied: { httpStatus: 500, message: 'The drive refused access to the path.' },
  FileNotFound: { httpStatus: 404, message: 'The file does not exist on the drive.' },
  FileCorrupt: { httpStatus: 500, message: 'The file failed its integrity check.' },
  PathEscapesDrive: { httpStatus: 400, message: 'The path escapes the drive root.' },
  NotADirectory: { httpStatus: 500, message: 'A path component is not a directory.' },
  DirectoryNotEmpty: { httpStatus: 409, message: 'The directory is not empty.' },
  IsADirectory: { httpStatus: 500, message: 'The path is a directory.' },
  UnsupportedFormat: { httpStatus: 500, message: 'The stored file has an unknown magic or version.' },
  CorruptFormat: { httpStatus: 500, message: 'The stored file could not be decoded.' },
  UnknownCodec: { httpStatus: 500, message: 'The object was written with an erasure codec this build does not know.' },
  InvalidLayout: { httpStatus: 400, message: 'The launch arguments do not describe a valid layout.' },
  InvalidConfiguration: { httpStatus: 400, message: 'A configuration value is invalid.' },
} as const satisfies Record<string, { httpStatus: number; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(errorCatalogue, value);
}

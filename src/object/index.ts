export { ErasureSet } from './erasure-set.js';
export type { SetConfig, ListQuorumMode, RepairRequest, SetLogger, Geometry } from './set-context.js';
export { geometryForClass } from './set-context.js';
export { LocalNamespaceLocker, objectResource, type NamespaceLocker, type LockMode } from './locks.js';
export type { ListEntry } from './list-objects.js';
export type { ObjectReader } from './get-object.js';
export type * from './types.js';
export { checkObjectKey, checkBucketName, objectDir, xlMetaPath, partPath } from './paths.js';

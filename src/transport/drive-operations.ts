/**
 * The drive operations a node asks of a peer's drives, by their wire names: the small ones that
 * travel in batches on the internode stream (rpc-batch.ts), and those with an HTTP request of their
 * own under /svc/rpc/v1/drive/<op> (data streamed either way, listings walked, disk info), with
 * the method each takes. Both sides name operations by these types: the serving tables
 * (api/rpc/drive-rpc-plugin.ts) must handle every one, and the caller (backends/remote) can name
 * no other. A name received that is none of them is refused for that operation alone.
 */
export const batchDriveOperations = ['read', 'range', 'write', 'atomic', 'append', 'mkdir', 'rename', 'delete-file', 'delete-dir', 'delete-recursive', 'list', 'stat'] as const;
export type BatchDriveOperation = (typeof batchDriveOperations)[number];

export const requestDriveOperations = {
  read: 'GET',
  range: 'GET',
  stream: 'GET',
  write: 'PUT',
  atomic: 'PUT',
  append: 'PUT',
  writer: 'PUT',
  mkdir: 'POST',
  rename: 'POST',
  'delete-file': 'POST',
  'delete-dir': 'POST',
  'delete-recursive': 'POST',
  list: 'GET',
  walk: 'GET',
  stat: 'GET',
  'disk-info': 'GET',
} as const;
export type RequestDriveOperation = keyof typeof requestDriveOperations;
export type DriveRequestMethod = (typeof requestDriveOperations)[RequestDriveOperation];

export function isBatchDriveOperation(name: string): name is BatchDriveOperation {
  return (batchDriveOperations as readonly string[]).includes(name);
}

export function isRequestDriveOperation(name: string): name is RequestDriveOperation {
  return Object.hasOwn(requestDriveOperations, name);
}

/**
 * Cluster state files under `.svc.sys` (`pool.bin`, `rebalance.bin`; docs/formats.md):
 *
 *   magic (4 bytes) | u16 version (1) | u32 payload length | payload (UTF-8 JSON) | u32 CRC-32
 *
 * Integers are big-endian. The decoder rejects another magic or version (UnsupportedFormat) and
 * anything truncated or failing its checksum (CorruptFormat); it returns the parsed JSON for the
 * owner of the file to validate.
 */
import { crc32 } from 'node:zlib';
import { SvcError } from '../errors/index.js';

export const stateFileVersion = 1;

export function encodeStateFile(magic: string, payload: unknown): Uint8Array {
  if (Buffer.byteLength(magic, 'latin1') !== 4) throw new SvcError('InternalError', `state-file magic must be 4 bytes: ${magic}`);
  const json = Buffer.from(JSON.stringify(payload), 'utf8');
  const out = Buffer.allocUnsafe(4 + 2 + 4 + json.length + 4);
  let offset = out.write(magic, 0, 'latin1');
  offset = out.writeUInt16BE(stateFileVersion, offset);
  offset = out.writeUInt32BE(json.length, offset);
  offset += json.copy(out, offset);
  out.writeUInt32BE(crc32(out.subarray(0, offset)), offset);
  return out;
}

export function decodeStateFile(magic: string, bytes: Uint8Array): unknown {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length < 6 || buffer.toString('latin1', 0, 4) !== magic) throw new SvcError('UnsupportedFormat', `${magic}: unknown magic`);
  const version = buffer.readUInt16BE(4);
  if (version !== stateFileVersion) throw new SvcError('UnsupportedFormat', `${magic}: unsupported version ${version}`);
  if (buffer.length < 14) throw new SvcError('CorruptFormat', `${magic}: truncated`);
  const length = buffer.readUInt32BE(6);
  if (buffer.length !== 10 + length + 4) throw new SvcError('CorruptFormat', `${magic}: length mismatch`);
  if (crc32(buffer.subarray(0, 10 + length)) !== buffer.readUInt32BE(10 + length)) throw new SvcError('CorruptFormat', `${magic}: checksum mismatch`);
  try {
    return JSON.parse(buffer.toString('utf8', 10, 10 + length));
  } catch {
    throw new SvcError('CorruptFormat', `${magic}: payload is not JSON`);
  }
}

/**
 * A JSON state file's text parsed (the read-repair queue, storage-class.json): over `maxBytes`
 * or not JSON is CorruptFormat naming `what`. The caller checks the version and every field.
 */
export function parseJsonStateFile(bytes: Uint8Array, maxBytes: number, what: string): unknown {
  if (bytes.length > maxBytes) throw new SvcError('CorruptFormat', `${what}: ${bytes.length} bytes, more than ${maxBytes}`);
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    throw new SvcError('CorruptFormat', `${what}: not JSON`);
  }
}

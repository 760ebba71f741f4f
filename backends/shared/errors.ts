/** Maps Node errno codes from fs calls onto the drive error codes of the catalogue. */
import { SvcError, isSvcError, withoutStack, type ErrorCode } from '../../src/errors/index.js';

const errnoToCode: Record<string, ErrorCode> = {
  ENOENT: 'FileNotFound',
  ENOSPC: 'DriveFull',
  EDQUOT: 'DriveFull',
  EIO: 'DriveFaulty',
  EACCES: 'DriveAccessDenied',
  EPERM: 'DriveAccessDenied',
  EROFS: 'DriveAccessDenied',
  ENOTDIR: 'NotADirectory',
  EISDIR: 'IsADirectory',
  ENOTEMPTY: 'DirectoryNotEmpty',
  // mkdir over an existing file: a path component is not a directory
  EEXIST: 'NotADirectory',
};

export function toDriveError(error: unknown, endpoint: string, path: string): SvcError {
  if (isSvcError(error)) return error;
  const errno = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  const code = errnoToCode[errno] ?? 'DriveFaulty';
  return withoutStack(() => new SvcError(code, `${code === 'FileNotFound' ? 'no such file' : errno || 'drive error'}: ${path}`, { endpoint, path, errno }, { cause: error }));
}

export async function mapDriveErrors<T>(endpoint: string, path: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw toDriveError(error, endpoint, path);
  }
}

import { SvcError } from '../errors/index.js';

/**
 * Normalises and checks a drive-relative path. Refuses absolute paths, `..` and `.` segments,
 * empty segments, backslashes and NUL bytes with PathEscapesDrive. '' is the drive root.
 */
export function checkDrivePath(path: string): string {
  if (path === '') return '';
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  const bad =
    trimmed.startsWith('/') ||
    trimmed.includes('\0') ||
    trimmed.includes('\\') ||
    trimmed.split('/').some((segment) => segment === '' || segment === '.' || segment === '..');
  if (bad) throw new SvcError('PathEscapesDrive', `path '${path}' escapes the drive root or is malformed`, { path });
  return trimmed;
}

export function joinDrivePath(...parts: string[]): string {
  return parts.filter((part) => part !== '').join('/');
}

export function parentOf(path: string): string {
  const index = path.lastIndexOf('/');
  return index < 0 ? '' : path.slice(0, index);
}

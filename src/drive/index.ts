export type { Drive, FileReader, FileWriter, FileStat, DiskInfo } from './drive.js';
export { systemDir, tmpDir, trashDir } from './drive.js';
export { checkDrivePath, joinDrivePath, parentOf } from './paths.js';

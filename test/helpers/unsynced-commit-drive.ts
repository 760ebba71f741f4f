/**
 * A deliberately broken write ordering, for tests only: an object's xl.meta (the write that
 * commits a PUT, a multipart complete or a delete marker) is written in place without a sync, so
 * the object layer acknowledges a change before it is durable. Every other call is passed through.
 * The power-cut scenario must catch it (test/chaos-power-cut.test.ts).
 */
import { systemDir, type Drive } from '../../src/drive/index.js';

const isObjectMeta = (path: string): boolean => path.endsWith('/xl.meta') && !path.startsWith(`${systemDir}/`);

export function unsyncedCommits(drive: Drive): Drive {
  return new Proxy(drive, {
    get(target, property, receiver) {
      if (property === 'writeFileAtomic') {
        return (path: string, data: Uint8Array) => (isObjectMeta(path) ? target.writeFile(path, data) : target.writeFileAtomic(path, data));
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

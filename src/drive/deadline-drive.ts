/**
 * Drive calls bounded by a deadline, and a drive that stops answering taken offline until it
 * answers again.
 *
 * Every call of the wrapped drive (and of its readers, writers and listings, one step at a time)
 * fails with DriveOffline once it has run `deadlineMs` without an answer; the call itself may
 * still finish later (a call that never answers "may or may not have taken effect", as the Drive
 * contract says). When a call misses its deadline and no other call of the drive finished while it
 * ran, the drive is hung, not slow: it is marked offline, and from then on every call fails at once
 * (a request never waits on it again) while a probe asks for its disk information every
 * `probeIntervalMs`; the first answer within the deadline brings it back online. A drive that
 * answers other calls while one runs long (one file hung, or a slow but working disk) stays online,
 * and only the late call fails.
 *
 * Not bounded: `deleteRecursive` (its time grows with what it deletes) and `close`.
 */
import { SvcError } from '../errors/index.js';
import type { DiskInfo, Drive, FileReader, FileStat, FileWriter } from './drive.js';

export interface DriveDeadlineOptions {
  deadlineMs: number;
  probeIntervalMs: number;
  /** Told when the drive goes offline or comes back. */
  onChange?: (endpoint: string, online: boolean, reason: string) => void;
}

export interface DeadlineState {
  online: boolean;
  /** Why it went offline, while it is. */
  reason?: string;
  /** Calls that missed their deadline so far. */
  missed: number;
  /** Times the drive was taken offline. */
  offlineCount: number;
}

export interface DeadlineDrive extends Drive {
  readonly deadline: DeadlineState;
}

export function withDeadlines(drive: Drive, options: DriveDeadlineOptions): DeadlineDrive {
  const state: DeadlineState = { online: true, missed: 0, offlineCount: 0 };
  /** Calls of this drive that have finished (answered or failed), to tell a hung drive from a slow call. */
  let finished = 0;
  let probe: NodeJS.Timeout | undefined;

  const setOnline = (online: boolean, reason: string): void => {
    if (state.online === online) return;
    state.online = online;
    if (online) {
      delete state.reason;
      if (probe) clearInterval(probe);
      probe = undefined;
    } else {
      state.reason = reason;
      state.offlineCount += 1;
      let probing = false;
      probe = setInterval(() => {
        if (probing) return;
        probing = true;
        void bounded('diskInfo', () => drive.diskInfo(), true)
          .then(() => setOnline(true, 'answered a probe'), () => undefined)
          .finally(() => (probing = false));
      }, options.probeIntervalMs);
      probe.unref();
    }
    options.onChange?.(drive.endpoint, online, reason);
  };

  function bounded<T>(what: string, call: () => Promise<T>, probing = false): Promise<T> {
    if (!state.online && !probing) {
      return Promise.reject(new SvcError('DriveOffline', `drive ${drive.endpoint} is offline: ${state.reason ?? 'it missed its deadline'}`, { drive: drive.endpoint }));
    }
    const finishedBefore = finished;
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        state.missed += 1;
        const hung = finished === finishedBefore;
        const reason = `${what} did not answer within ${options.deadlineMs} ms`;
        if (hung && !probing) setOnline(false, reason);
        reject(new SvcError('DriveOffline', `drive ${drive.endpoint}: ${reason}`, { drive: drive.endpoint }));
      }, options.deadlineMs);
      call().then(
        (value) => {
          finished += 1;
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          resolve(value);
        },
        (error: unknown) => {
          finished += 1;
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          reject(error);
        },
      );
    });
  }

  const boundedIterable = (what: string, make: () => AsyncIterable<Uint8Array> | AsyncIterable<string>) =>
    ({
      [Symbol.asyncIterator]() {
        let iterator: AsyncIterator<unknown> | undefined;
        return {
          next: () =>
            bounded(what, () => {
              iterator ??= (make() as AsyncIterable<unknown>)[Symbol.asyncIterator]();
              return iterator.next();
            }),
          return: async (value?: unknown) => {
            await iterator?.return?.(value);
            return { done: true as const, value: undefined };
          },
        };
      },
    }) as AsyncIterable<never>;

  const boundedReader = (reader: FileReader): FileReader => ({
    read: (offset, length, into) => bounded('read', () => reader.read(offset, length, into)),
    close: () => reader.close(),
  });

  const boundedWriter = (writer: FileWriter): FileWriter => ({
    write: (chunk) => bounded('write', () => writer.write(chunk)),
    close: () => bounded('close of a written file', () => writer.close()),
    abort: () => writer.abort(),
  });

  return {
    endpoint: drive.endpoint,
    deadline: state,
    readFile: (path) => bounded('readFile', () => drive.readFile(path)),
    readRange: (path, offset, length, into) => bounded('readRange', () => drive.readRange(path, offset, length, into)),
    readStream: (path, streamOptions) => boundedIterable('readStream', () => drive.readStream(path, streamOptions)) as AsyncIterable<Uint8Array>,
    openReader: async (path) => boundedReader(await bounded('openReader', () => drive.openReader(path))),
    writeFile: (path, data, writeOptions) => bounded('writeFile', () => drive.writeFile(path, data, writeOptions)),
    writeFileAtomic: (path, data) => bounded('writeFileAtomic', () => drive.writeFileAtomic(path, data)),
    appendFile: (path, data) => bounded('appendFile', () => drive.appendFile(path, data)),
    openWriter: async (path) => boundedWriter(await bounded('openWriter', () => drive.openWriter(path))),
    makeDir: (path) => bounded('makeDir', () => drive.makeDir(path)),
    rename: (source, target) => bounded('rename', () => drive.rename(source, target)),
    deleteFile: (path) => bounded('deleteFile', () => drive.deleteFile(path)),
    deleteDir: (path) => bounded('deleteDir', () => drive.deleteDir(path)),
    deleteRecursive: (path) => (state.online ? drive.deleteRecursive(path) : bounded('deleteRecursive', () => drive.deleteRecursive(path))),
    listDir: (path) => bounded('listDir', () => drive.listDir(path)),
    walk: (prefix, walkOptions) => boundedIterable('walk', () => drive.walk(prefix, walkOptions)) as AsyncIterable<string>,
    stat: (path): Promise<FileStat> => bounded('stat', () => drive.stat(path)),
    diskInfo: (): Promise<DiskInfo> => bounded('diskInfo', () => drive.diskInfo()),
    close: async () => {
      if (probe) clearInterval(probe);
      await drive.close();
    },
  };
}

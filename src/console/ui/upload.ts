/**
 * Uploads from the browser: a file up to one part in one PUT, a larger one as a multipart upload
 * whose parts are sent one after another (slices of the file, read by the browser as they are
 * sent), each with its progress; cancel aborts the request in flight and the multipart upload.
 */
import { apiUrl, api, csrfHeader, errorOf, ApiError } from './api';

export const partSizeBytes = 8 * 1024 * 1024;

export type UploadState = 'queued' | 'uploading' | 'done' | 'failed' | 'canceled';

export interface UploadTask {
  id: number;
  key: string;
  sizeBytes: number;
  sentBytes: number;
  state: UploadState;
  error?: string;
  multipart: boolean;
  /** When the bytes began to go (performance.now()), for the speed and the time left. */
  startedAt?: number;
  cancel(): void;
}

/** Bytes per second so far and the seconds left at that pace, once a second's worth is known. */
export function pace(task: UploadTask, nowMs = performance.now()): { bytesPerSecond: number; secondsLeft: number } | undefined {
  if (task.startedAt === undefined || task.state !== 'uploading') return undefined;
  const elapsedSeconds = (nowMs - task.startedAt) / 1000;
  if (elapsedSeconds < 1 || task.sentBytes === 0) return undefined;
  const bytesPerSecond = task.sentBytes / elapsedSeconds;
  return { bytesPerSecond, secondsLeft: (task.sizeBytes - task.sentBytes) / bytesPerSecond };
}

let nextId = 1;

/** Sends one body with XMLHttpRequest (fetch has no upload progress), reporting bytes sent. */
function send(url: string, body: Blob, onProgress: (sent: number) => void, signal: AbortSignal): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.setRequestHeader('x-csrf-token', csrfHeader());
    xhr.setRequestHeader('content-type', 'application/octet-stream');
    xhr.upload.onprogress = (event) => onProgress(event.loaded);
    xhr.onload = async () => {
      const response = new Response(xhr.responseText, { status: xhr.status });
      if (xhr.status >= 200 && xhr.status < 300) resolve(JSON.parse(xhr.responseText || '{}'));
      else reject(await errorOf(response));
    };
    xhr.onerror = () => reject(new ApiError(0, 'NetworkError', 'the upload was interrupted'));
    xhr.onabort = () => reject(new ApiError(0, 'Canceled', 'canceled'));
    signal.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(body);
  });
}

export function startUpload(bucket: string, key: string, file: File, storageClass: string, onChange: (task: UploadTask) => void): UploadTask {
  const controller = new AbortController();
  const task: UploadTask = {
    id: nextId++,
    key,
    sizeBytes: file.size,
    sentBytes: 0,
    state: 'queued',
    multipart: file.size > partSizeBytes,
    cancel: () => controller.abort(),
  };
  const update = (changes: Partial<UploadTask>) => {
    Object.assign(task, changes);
    onChange(task);
  };
  const path = `buckets/${encodeURIComponent(bucket)}`;
  const run = async () => {
    update({ state: 'uploading', startedAt: performance.now() });
    if (!task.multipart) {
      await send(apiUrl(`${path}/objects`, { key, storageClass, contentType: file.type || undefined }), file, (sent) => update({ sentBytes: sent }), controller.signal);
      return;
    }
    const { uploadId } = await api<{ uploadId: string }>('POST', `${path}/uploads`, { body: { key, storageClass, contentType: file.type || undefined } });
    try {
      const parts: { partNumber: number; etag: string }[] = [];
      for (let offset = 0, partNumber = 1; offset < file.size; offset += partSizeBytes, partNumber += 1) {
        const slice = file.slice(offset, Math.min(file.size, offset + partSizeBytes));
        const url = apiUrl(`${path}/uploads/${encodeURIComponent(uploadId)}/parts/${partNumber}`, { key });
        const answer = await send(url, slice, (sent) => update({ sentBytes: offset + sent }), controller.signal);
        parts.push({ partNumber, etag: String(answer.etag) });
      }
      await api('POST', `${path}/uploads/${encodeURIComponent(uploadId)}/complete`, { body: { key, parts } });
    } catch (error) {
      await api('DELETE', `${path}/uploads/${encodeURIComponent(uploadId)}`, { query: { key } }).catch(() => undefined);
      throw error;
    }
  };
  void run().then(
    () => update({ state: 'done', sentBytes: file.size }),
    (error: ApiError) => update(controller.signal.aborted ? { state: 'canceled' } : { state: 'failed', error: `${error.code}: ${error.message}` }),
  );
  return task;
}

/** Files dropped on the page, folders walked, each with its path relative to the drop. */
export async function droppedFiles(items: DataTransferItemList): Promise<{ path: string; file: File }[]> {
  const entries = [...items].map((item) => item.webkitGetAsEntry?.()).filter((entry): entry is FileSystemEntry => entry !== null && entry !== undefined);
  const found: { path: string; file: File }[] = [];
  const walk = async (entry: FileSystemEntry, path: string): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
      found.push({ path: `${path}${entry.name}`, file });
      return;
    }
    const reader = (entry as FileSystemDirectoryEntry).createReader();
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
      if (batch.length === 0) break;
      for (const child of batch) await walk(child, `${path}${entry.name}/`);
    }
  };
  for (const entry of entries) await walk(entry, '');
  return found;
}

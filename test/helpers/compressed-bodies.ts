/** Bodies and stored records for the compression tests that run a real server. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeXlMeta } from '../../src/format/xl-meta.js';
import type { ObjectVersion } from '../../src/format/xl-meta-types.js';

/** Log lines led by `marker`: text that compresses several times over. */
export function logLines(size: number, marker: string): Buffer {
  const body = Buffer.alloc(size);
  let offset = 0;
  for (let line = 0; offset < size; line += 1) {
    const text = `${marker} ${line} GET /photos/${line % 311}.jpg 200 ${(line * 7919) % 50_000}\n`;
    offset += body.write(text, offset, Math.min(text.length, size - offset), 'latin1');
  }
  return body;
}

/** The newest version of bucket/key as the drive at `drive` stores it. */
export async function storedVersionOn(drive: string, bucket: string, key: string): Promise<ObjectVersion> {
  return decodeXlMeta(new Uint8Array(await readFile(join(drive, bucket, key, 'xl.meta')))).versions[0]!;
}

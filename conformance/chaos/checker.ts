/**
 * The write checker of chaos runs: records every attempted write with the bytes it carried and
 * whether it was acknowledged, then verifies that every acknowledged write reads back identical
 * and that nothing unacknowledged is half-visible (an unacknowledged key reads as one of the
 * bodies written to it, whole, or is absent).
 */
import { createHash } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Prng } from '../../src/util/prng.js';

interface Attempt {
  md5: string;
  acknowledged: boolean;
}

export class WriteChecker {
  /** Per key, every body attempted, in order. */
  private readonly attempts = new Map<string, Attempt[]>();
  acknowledged = 0;
  refused = 0;
  /** Why writes were refused: error name -> count. */
  readonly refusals = new Map<string, number>();

  constructor(readonly bucket: string) {}

  /** One PUT of a random body (sizes from inline to several erasure blocks). */
  async put(s3: S3Client, key: string, prng: Prng): Promise<void> {
    const size = [100, 5_000, 200_000, 1_100_000, 2_500_000][prng.int(5)]! + prng.int(1000);
    const body = Buffer.alloc(size, prng.int(256));
    body.writeUInt32BE(prng.int(2 ** 31), 0);
    const attempt: Attempt = { md5: createHash('md5').update(body).digest('hex'), acknowledged: false };
    const list = this.attempts.get(key) ?? [];
    list.push(attempt);
    this.attempts.set(key, list);
    try {
      await s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body }));
      attempt.acknowledged = true;
      this.acknowledged += 1;
    } catch (error) {
      this.refused += 1;
      const name = (error as Error).name ?? 'Error';
      this.refusals.set(name, (this.refusals.get(name) ?? 0) + 1);
    }
  }

  /** Problems found (empty when every rule holds). */
  async verify(s3: S3Client): Promise<string[]> {
    const problems: string[] = [];
    for (const [key, attempts] of this.attempts) {
      let md5: string | undefined;
      try {
        const object = await s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
        md5 = createHash('md5').update(await object.Body!.transformToByteArray()).digest('hex');
      } catch (error) {
        const name = (error as Error).name;
        if (name !== 'NoSuchKey') {
          problems.push(`${key}: read failed with ${name}`);
          continue;
        }
      }
      const lastAcknowledged = attempts.map((attempt, index) => (attempt.acknowledged ? index : -1)).reduce((a, b) => Math.max(a, b), -1);
      if (md5 === undefined) {
        if (lastAcknowledged >= 0) problems.push(`${key}: acknowledged write lost (absent)`);
        continue;
      }
      const index = attempts.findIndex((attempt) => attempt.md5 === md5);
      if (index < 0) problems.push(`${key}: reads bytes no write carried (half-visible or corrupt)`);
      else if (index < lastAcknowledged) problems.push(`${key}: reads an older body than its last acknowledged write`);
    }
    return problems;
  }

  keys(): string[] {
    return [...this.attempts.keys()];
  }
}

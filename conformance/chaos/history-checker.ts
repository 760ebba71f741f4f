/**
 * The history checker of the power-cut scenario: every change attempted on a key (a PUT, a
 * multipart complete, a delete) in the order it was made (one change in flight per key), with
 * whether it was acknowledged. After every restart it demands, per key, that a GET answers the
 * outcome of the last acknowledged change or of a later unacknowledged one (which may or may not
 * have happened), whole; with nothing acknowledged, absence or any attempted body. A listing must
 * name exactly the keys that read back, each with the size of its body.
 *
 * Problems are named by what broke: `acknowledged write lost`, `acknowledged delete undone`,
 * `older body than the last acknowledged write`, `torn or foreign bytes`, `unreadable`,
 * `listed but not readable`, `readable but not listed`, `listed size differs from the body`.
 */
import { createHash } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

interface Change {
  /** md5 of the body, or undefined for a delete. */
  md5?: string;
  sizeBytes?: number;
  acknowledged: boolean;
}

/** Counts of a run, as every checker reports them. */
export interface Tally {
  acknowledged: number;
  refused: number;
  refusals: Map<string, number>;
}

export const md5Of = (bytes: Uint8Array): string => createHash('md5').update(bytes).digest('hex');

type Outcome = { kind: 'absent' } | { kind: 'body'; md5: string; sizeBytes: number } | { kind: 'error'; name: string };

export class HistoryChecker implements Tally {
  private readonly changes = new Map<string, Change[]>();
  acknowledged = 0;
  refused = 0;
  readonly refusals = new Map<string, number>();

  constructor(readonly bucket: string) {}

  /** Records a change about to be sent; `send` performs it. Resolves true when acknowledged. */
  async attempt(key: string, body: Uint8Array | undefined, send: () => Promise<unknown>): Promise<boolean> {
    const change: Change = body === undefined ? { acknowledged: false } : { md5: md5Of(body), sizeBytes: body.length, acknowledged: false };
    const list = this.changes.get(key) ?? [];
    list.push(change);
    this.changes.set(key, list);
    try {
      await send();
    } catch (error) {
      this.refuse(error);
      return false;
    }
    change.acknowledged = true;
    this.acknowledged += 1;
    return true;
  }

  /** Counts a refused request that changes nothing visible (a multipart part, an upload's creation). */
  refuse(error: unknown): void {
    this.refused += 1;
    const name = (error as Error).name || 'Error';
    this.refusals.set(name, (this.refusals.get(name) ?? 0) + 1);
  }

  /** Keys with at least one change attempted, in order. */
  keys(): string[] {
    return [...this.changes.keys()].sort();
  }

  async verify(s3: S3Client): Promise<string[]> {
    const problems: string[] = [];
    const outcomes = new Map<string, Outcome>();
    for (const key of this.keys()) {
      const outcome = await readOutcome(s3, this.bucket, key);
      outcomes.set(key, outcome);
      const problem = this.judge(key, outcome);
      if (problem) problems.push(`${key}: ${problem}`);
    }
    problems.push(...(await this.checkListing(s3, outcomes)));
    return problems;
  }

  private judge(key: string, outcome: Outcome): string | undefined {
    if (outcome.kind === 'error') return `unreadable (${outcome.name})${this.changes.get(key)!.some((change) => change.acknowledged) ? ' after acknowledged changes' : ''}`;
    const changes = this.changes.get(key)!;
    const last = changes.map((change) => change.acknowledged).lastIndexOf(true);
    const allowed = changes.slice(Math.max(0, last));
    if (outcome.kind === 'absent') {
      if (last < 0 || allowed.some((change) => change.md5 === undefined)) return undefined;
      return 'acknowledged write lost (absent)';
    }
    if (!changes.some((change) => change.md5 === outcome.md5)) return `torn or foreign bytes (${outcome.sizeBytes} bytes no change carried)`;
    if (allowed.some((change) => change.md5 === outcome.md5)) return undefined;
    const which = `change ${changes.findIndex((change) => change.md5 === outcome.md5) + 1} of ${changes.length} reads back, the last acknowledged is ${last + 1}`;
    return changes[last]!.md5 === undefined ? `acknowledged delete undone (${which})` : `older body than the last acknowledged write (${which})`;
  }

  private async checkListing(s3: S3Client, outcomes: Map<string, Outcome>): Promise<string[]> {
    const problems: string[] = [];
    const listed = new Map<string, number>();
    try {
      let token: string | undefined;
      do {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: this.bucket, MaxKeys: 250, ...(token ? { ContinuationToken: token } : {}) }));
        for (const entry of page.Contents ?? []) listed.set(entry.Key!, entry.Size ?? -1);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (error) {
      return [`listing failed (${(error as Error).name})`];
    }
    for (const [key, sizeBytes] of listed) {
      const outcome = outcomes.get(key) ?? (await readOutcome(s3, this.bucket, key));
      if (outcome.kind !== 'body') problems.push(`${key}: listed but not readable (${outcome.kind === 'error' ? outcome.name : 'NoSuchKey'})`);
      else if (outcome.sizeBytes !== sizeBytes) problems.push(`${key}: listed size differs from the body (${sizeBytes} listed, ${outcome.sizeBytes} read)`);
    }
    for (const [key, outcome] of outcomes) if (outcome.kind === 'body' && !listed.has(key)) problems.push(`${key}: readable but not listed`);
    return problems;
  }
}

async function readOutcome(s3: S3Client, bucket: string, key: string): Promise<Outcome> {
  try {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const bytes = await object.Body!.transformToByteArray();
    return { kind: 'body', md5: md5Of(bytes), sizeBytes: bytes.length };
  } catch (error) {
    const name = (error as Error).name;
    return name === 'NoSuchKey' ? { kind: 'absent' } : { kind: 'error', name };
  }
}

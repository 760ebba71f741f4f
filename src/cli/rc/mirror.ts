/**
 * `rc mirror SOURCE TARGET`: copies a bucket (or a prefix of it) or a local directory to another,
 * between any two aliases. When both buckets keep versions, every version and delete marker is
 * copied in order, oldest first, so the target's history reads as the source's; otherwise the
 * current objects. Each copy carries its content type and headers, user metadata, tags, and
 * retention and legal hold where the target bucket has object lock.
 *
 * What is already there is skipped: per key, the target's versions that match the source's oldest
 * first (same size and ETag, or the same size where either ETag is a multipart one) are not
 * copied again, and a checkpoint file (`RC_CONFIG_DIR/mirror/<hash>.json`, removed once a run
 * copied everything) names the versions a run copied, so an interrupted run resumes where it
 * stopped. One failure does not stop the run: the key's later versions wait (their order must be
 * kept), every other key goes on, and the run ends with a non-zero exit listing what it could not
 * copy. `--remove` removes target keys the source no longer has; `--dry-run` only says what it
 * would do; `--watch` keeps copying (svc's live events where the source is svc, else a listing
 * every RC_WATCH_INTERVAL_MS, default 5 s) until interrupted.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { formatBytes, RcError, type RcContext } from './context.js';
import { directorySide, s3Side, type MirrorEntry, type MirrorSide } from './mirror-sides.js';
import { remoteTarget } from './objects.js';
import { openSigned } from './signed-request.js';

export interface MirrorOptions {
  watch: boolean;
  remove: boolean;
  dryRun: boolean;
}

interface Failure {
  key: string;
  versionId?: string;
  reason: string;
}

interface Plan {
  /** Per key, the source entries still to copy, oldest first. */
  copies: Map<string, MirrorEntry[]>;
  removals: string[];
  skipped: number;
  totalBytes: number;
}

interface Checkpoint {
  version: 1;
  source: string;
  target: string;
  copied: string[];
}

const concurrency = 4;

export async function mirror(context: RcContext, from: string, to: string, options: MirrorOptions): Promise<void> {
  const source = await sideOf(context, from);
  const target = await sideOf(context, to);
  const checkpointPath = join(dirname(context.configPath), 'mirror', `${createHash('sha256').update(`${from}\n${to}`).digest('hex').slice(0, 32)}.json`);
  const result = await mirrorOnce(context, source, target, options, checkpointPath);
  report(context, source, target, result, options);
  if (options.watch && !options.dryRun) await keepMirroring(context, from, source, target, options, checkpointPath);
  if (result.failures.length > 0) throw new RcError(`${result.failures.length} could not be copied:\n${result.failures.map((failure) => `  ${failure.key}${failure.versionId ? ` (version ${failure.versionId})` : ''}: ${failure.reason}`).join('\n')}`);
}

async function sideOf(context: RcContext, text: string): Promise<MirrorSide> {
  const remote = await remoteTarget(context, text);
  if (!remote) return directorySide(text);
  if (!remote.bucket) throw new RcError(`'${text}' names no bucket: write ${remote.aliasName}/<bucket>[/<prefix>]`, 2);
  const prefix = remote.key === undefined ? '' : remote.key.endsWith('/') ? remote.key : `${remote.key}/`;
  // Checksums only where a request needs one: an older S3 server does not read the SDK's trailing checksums.
  const client = new S3Client({
    endpoint: remote.alias.url, region: 'us-east-1', forcePathStyle: true, maxAttempts: 3,
    credentials: { accessKeyId: remote.alias.accessKey, secretAccessKey: remote.alias.secretKey },
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const threshold = context.io.env.RC_MIRROR_MULTIPART_THRESHOLD_BYTES;
  if (threshold !== undefined && !/^\d{1,13}$/.test(threshold)) throw new RcError(`RC_MIRROR_MULTIPART_THRESHOLD_BYTES must be a whole number of bytes, not '${threshold}'`, 2);
  return s3Side(client, text, remote.bucket, prefix, threshold === undefined ? {} : { multipartThresholdBytes: Number(threshold) });
}

interface RunResult {
  copied: number;
  copiedBytes: number;
  skipped: number;
  removed: number;
  failures: Failure[];
  seconds: number;
  planned: string[];
}

async function mirrorOnce(context: RcContext, source: MirrorSide, target: MirrorSide, options: MirrorOptions, checkpointPath: string, onlyKeys?: Set<string>): Promise<RunResult> {
  const started = Date.now();
  const checkpoint = await readCheckpoint(checkpointPath, source.label, target.label);
  const [sourceEntries, targetEntries, sourceVersioned, targetVersioned] = await Promise.all([
    source.list().catch((error: unknown) => {
      throw new RcError(`cannot list ${source.label}: ${describe(error)}`);
    }),
    target.list().catch((error: unknown) => {
      throw new RcError(`cannot list ${target.label}: ${describe(error)}`);
    }),
    source.versioned(),
    target.versioned(),
  ]);
  const keep = (entry: MirrorEntry) => onlyKeys === undefined || onlyKeys.has(entry.key);
  const plan = planOf(sourceEntries.filter(keep), targetEntries.filter(keep), sourceVersioned && targetVersioned, options.remove, new Set(checkpoint.copied));
  const result: RunResult = { copied: 0, copiedBytes: 0, skipped: plan.skipped, removed: 0, failures: [], seconds: 0, planned: [] };
  if (options.dryRun) {
    for (const [key, entries] of plan.copies) for (const entry of entries) result.planned.push(`${entry.deleteMarker ? 'delete marker' : 'copy'} ${key}${entry.versionId && entry.versionId !== 'null' ? ` (version ${entry.versionId})` : ''}${entry.deleteMarker ? '' : ` ${formatBytes(entry.size)}`}`);
    for (const key of plan.removals) result.planned.push(`remove ${key}`);
    return result;
  }
  const bar = context.progress('mirror');
  const show = (): void => {
    const elapsed = Math.max(0.001, (Date.now() - started) / 1000);
    const rate = result.copiedBytes / elapsed;
    const eta = rate > 0 ? Math.ceil((plan.totalBytes - result.copiedBytes) / rate) : 0;
    bar.update(result.copiedBytes, plan.totalBytes, `${formatBytes(result.copiedBytes)}/${formatBytes(plan.totalBytes)} ${formatBytes(Math.round(rate))}/s ETA ${eta}s`);
  };
  let saving = Promise.resolve();
  const record = (entry: MirrorEntry): void => {
    checkpoint.copied.push(idOf(entry));
    saving = saving.then(() => writeCheckpoint(checkpointPath, checkpoint));
  };
  const keys = [...plan.copies.keys()];
  await Promise.all(Array.from({ length: Math.min(concurrency, keys.length) }, async () => {
    for (let key = keys.shift(); key !== undefined; key = keys.shift()) {
      for (const entry of plan.copies.get(key)!) {
        try {
          await copyEntry(source, target, entry);
          result.copied += 1;
          result.copiedBytes += entry.size;
          record(entry);
          show();
        } catch (error) {
          result.failures.push({ key, ...(entry.versionId && entry.versionId !== 'null' ? { versionId: entry.versionId } : {}), reason: describe(error) });
          // Later versions of this key wait for the next run: their order must be kept.
          break;
        }
      }
    }
  }));
  for (const key of plan.removals) {
    try {
      await target.remove(key);
      result.removed += 1;
    } catch (error) {
      result.failures.push({ key, reason: `not removed: ${describe(error)}` });
    }
  }
  await saving;
  bar.finish();
  if (result.failures.length === 0) await rm(checkpointPath, { force: true });
  result.seconds = (Date.now() - started) / 1000;
  return result;
}

async function copyEntry(source: MirrorSide, target: MirrorSide, entry: MirrorEntry): Promise<void> {
  if (entry.deleteMarker) {
    await target.remove(entry.key);
    return;
  }
  const { body, details } = await source.read(entry);
  await target.write(entry.key, body, entry.size, details);
}

/** What to copy: per key, the source's versions (or its current object) not already on the target nor in the checkpoint. */
export function planOf(sourceEntries: MirrorEntry[], targetEntries: MirrorEntry[], versions: boolean, remove: boolean, copied: Set<string>): Plan {
  const bySource = oldestFirst(sourceEntries);
  const byTarget = oldestFirst(targetEntries);
  const plan: Plan = { copies: new Map(), removals: [], skipped: 0, totalBytes: 0 };
  for (const [key, history] of bySource) {
    const existing = byTarget.get(key) ?? [];
    let wanted = versions ? history : history.slice(-1).filter((entry) => !entry.deleteMarker);
    if (versions) {
      // The target's history that matches the source's, oldest first, is already there.
      let matched = 0;
      while (matched < wanted.length && matched < existing.length && same(wanted[matched]!, existing[matched]!)) matched += 1;
      plan.skipped += matched;
      wanted = wanted.slice(matched);
    } else if (wanted.length === 1 && existing.length > 0 && same(wanted[0]!, existing.at(-1)!)) {
      plan.skipped += 1;
      wanted = [];
    }
    const left = wanted.filter((entry) => !copied.has(idOf(entry)));
    plan.skipped += wanted.length - left.length;
    if (left.length > 0) plan.copies.set(key, left);
    plan.totalBytes += left.reduce((sum, entry) => sum + entry.size, 0);
  }
  if (remove) {
    for (const [key, history] of byTarget) {
      const current = bySource.get(key)?.at(-1);
      if (history.at(-1)!.deleteMarker || (current && !current.deleteMarker)) continue;
      if (current?.deleteMarker && versions) continue; // the marker itself is copied
      plan.removals.push(key);
    }
  }
  return plan;
}

function oldestFirst(entries: MirrorEntry[]): Map<string, MirrorEntry[]> {
  const byKey = new Map<string, MirrorEntry[]>();
  for (const entry of entries) byKey.set(entry.key, [...(byKey.get(entry.key) ?? []), entry]);
  // Listings give a key's versions newest first.
  for (const history of byKey.values()) history.reverse();
  return byKey;
}

function same(source: MirrorEntry, target: MirrorEntry): boolean {
  if (source.deleteMarker || target.deleteMarker) return source.deleteMarker === target.deleteMarker;
  if (source.size !== target.size) return false;
  if (source.etag === undefined || target.etag === undefined) return false;
  return source.etag === target.etag || source.etag.includes('-') || target.etag.includes('-');
}

const idOf = (entry: MirrorEntry): string => `${entry.key}\n${entry.versionId ?? ''}\n${entry.etag ?? ''}\n${entry.size}`;

async function readCheckpoint(path: string, source: string, target: string): Promise<Checkpoint> {
  const fresh: Checkpoint = { version: 1, source, target, copied: [] };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return fresh;
  }
  const parsed = JSON.parse(text) as Partial<Checkpoint>;
  if (parsed.version !== 1 || parsed.source !== source || parsed.target !== target || !Array.isArray(parsed.copied) || !parsed.copied.every((id) => typeof id === 'string')) {
    throw new RcError(`the checkpoint ${path} is not one of this mirror (remove it to start over)`);
  }
  return parsed as Checkpoint;
}

async function writeCheckpoint(path: string, checkpoint: Checkpoint): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.tmp`;
  await writeFile(temporary, JSON.stringify(checkpoint), { mode: 0o600 });
  await rename(temporary, path);
}

function report(context: RcContext, source: MirrorSide, target: MirrorSide, result: RunResult, options: MirrorOptions): void {
  if (options.dryRun) {
    context.print({ source: source.label, target: target.label, dryRun: true, planned: result.planned, skipped: result.skipped }, () =>
      [...result.planned, `dry run: ${result.planned.length} change(s) planned, ${result.skipped} already there; nothing was changed`].join('\n'));
    return;
  }
  const summary = { source: source.label, target: target.label, copied: result.copied, copiedBytes: result.copiedBytes, skipped: result.skipped, removed: result.removed, failed: result.failures, seconds: result.seconds };
  context.print(summary, () => `mirrored ${source.label} -> ${target.label}: ${result.copied} copied (${formatBytes(result.copiedBytes)}) in ${result.seconds.toFixed(1)} s, ${result.skipped} already there, ${result.removed} removed, ${result.failures.length} failed`);
}

function describe(error: unknown): string {
  const named = error as { name?: string; message?: string; Code?: string };
  return `${named.Code ?? named.name ?? 'Error'}: ${named.message ?? String(error)}`;
}

/** After the first run: copy again on each change of the source (svc's live events), or on a timer. */
async function keepMirroring(context: RcContext, from: string, source: MirrorSide, target: MirrorSide, options: MirrorOptions, checkpointPath: string): Promise<void> {
  const remote = await remoteTarget(context, from);
  const intervalMs = Number(context.io.env.RC_WATCH_INTERVAL_MS ?? '5000');
  const runFor = async (keys?: Set<string>): Promise<void> => {
    const result = await mirrorOnce(context, source, target, options, checkpointPath, keys);
    if (result.copied + result.removed + result.failures.length > 0) report(context, source, target, result, options);
  };
  if (remote?.bucket) {
    const prefix = remote.key === undefined ? '' : remote.key.endsWith('/') ? remote.key : `${remote.key}/`;
    const keyOf = (eventKey: string): string | undefined => {
      const key = eventKey.slice(remote.bucket!.length + 1);
      return key.startsWith(prefix) ? key.slice(prefix.length) : undefined;
    };
    const query = new URLSearchParams({ bucket: remote.bucket, ...(prefix ? { prefix } : {}) });
    const response = await openSigned({ endpoint: remote.alias.url, accessKey: remote.alias.accessKey, secretKey: remote.alias.secretKey, path: '/svc/admin/v4/event/listen', rawQuery: query.toString() }).catch(() => undefined);
    if (response?.status === 200 && response.body) {
      const decoder = new TextDecoder();
      let pending = '';
      // Whatever changed between the first run and the listener's start.
      await runFor();
      for await (const chunk of response.body) {
        pending += decoder.decode(chunk, { stream: true });
        const lines = pending.split('\n');
        pending = lines.pop()!;
        const keys = new Set<string>();
        for (const line of lines) {
          if (line.trim() === '') continue;
          const value = JSON.parse(line) as { Key?: string; Error?: { Code: string; Message: string } };
          if (value.Error) throw new RcError(`${value.Error.Code}: ${value.Error.Message}`);
          const key = value.Key === undefined ? undefined : keyOf(value.Key);
          if (key !== undefined) keys.add(key);
        }
        if (keys.size > 0) await runFor(keys);
      }
      throw new RcError('the source ended its event stream');
    }
  }
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    await runFor();
  }
}

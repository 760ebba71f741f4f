/**
 * `rc watch ALIAS/BUCKET`: the bucket's events as they happen on any node, one line each (time,
 * event, key, size), or each event's JSON with --json, until interrupted. A signed GET of the
 * admin API's listen route, read as it comes (docs/notifications.md "Watching events live").
 */
import { openSigned } from './signed-request.js';
import { formatBytes, RcError, type RcContext } from './context.js';
import { requireTarget } from './objects.js';

/** The short names `--events` takes, as mc watch names them, and the event families they stand for. */
export const watchEventNames: Record<string, string> = {
  put: 's3:ObjectCreated:*',
  delete: 's3:ObjectRemoved:*',
  tagging: 's3:ObjectTagging:*',
  ilm: 's3:LifecycleExpiration:*',
};

export interface WatchOptions {
  prefix?: string;
  suffix?: string;
  /** Comma-separated short names (put, delete, tagging, ilm) or full event names (s3:ObjectCreated:Put). */
  events?: string;
}

/** The listen route's `events` parameter from `--events`; a usage error names what is not known. */
export function watchEvents(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const names = text.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknown = names.filter((name) => !(name in watchEventNames) && !name.startsWith('s3:'));
  if (names.length === 0 || unknown.length > 0) throw new RcError(`--events takes ${Object.keys(watchEventNames).join(', ')} or event names such as s3:ObjectCreated:Put, not '${unknown.join(',') || text}'`, 2);
  return [...new Set(names.map((name) => watchEventNames[name] ?? name))].join(',');
}

export async function watch(context: RcContext, text: string, options: WatchOptions, signal?: AbortSignal): Promise<void> {
  const events = watchEvents(options.events);
  const target = await requireTarget(context, text, 'bucket');
  const query = new URLSearchParams({ bucket: target.bucket, ...(options.prefix ? { prefix: options.prefix } : {}), ...(options.suffix ? { suffix: options.suffix } : {}), ...(events ? { events } : {}) });
  const origin = new URL(target.alias.url).origin;
  let response: Response;
  try {
    response = await openSigned({ endpoint: target.alias.url, accessKey: target.alias.accessKey, secretKey: target.alias.secretKey, path: '/svc/admin/v4/event/listen', rawQuery: query.toString() }, signal);
  } catch (error) {
    if (signal?.aborted) return;
    throw new RcError(`cannot reach ${origin}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`);
  }
  if (response.status !== 200 || !response.body) throw await refusal(response, origin);
  try {
    for await (const line of lines(response.body)) handleLine(context, line, `${target.aliasName}/${target.bucket}`);
  } catch (error) {
    if (signal?.aborted) return;
    if (error instanceof RcError) throw error;
    throw new RcError(`the watch ended: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`);
  }
  throw new RcError(`${origin} ended the watch`);
}

async function refusal(response: Response, origin: string): Promise<RcError> {
  const body = await response.text();
  try {
    const parsed = JSON.parse(body) as { Code?: string; Message?: string };
    return new RcError(`${parsed.Code ?? response.status}: ${parsed.Message ?? 'request failed'}`);
  } catch {
    return new RcError(`${origin} answered ${response.status} without JSON (is it an svc server?)`);
  }
}

function handleLine(context: RcContext, line: string, where: string): void {
  if (line.trim() === '') return; // the server's keep-alive
  const value = JSON.parse(line) as Record<string, any>;
  if (value.Error) throw new RcError(`${value.Error.Code}: ${value.Error.Message}`);
  if (value.Watching) {
    const unreachable = value.Watching.unreachable as string[];
    context.io.err(`watching ${where} on ${value.Watching.nodes} node(s)${unreachable.length > 0 ? ` (not answering yet: ${unreachable.join(', ')})` : ''}; Ctrl-C stops`);
    return;
  }
  if (context.json) {
    context.io.out(JSON.stringify(value));
    return;
  }
  context.io.out(describeEvent(value));
}

/** One event for people: `[time] event key size`. */
export function describeEvent(message: Record<string, any>): string {
  const record = message.Records?.[0] ?? {};
  const object = record.s3?.object ?? {};
  const key = String(message.Key ?? '').slice(String(record.s3?.bucket?.name ?? '').length + 1);
  const size = typeof object.size === 'number' ? formatBytes(object.size) : '';
  return [`[${record.eventTime ?? ''}]`, message.EventName, key, size].filter((part) => part !== '').join(' ');
}

/** The body's lines as they arrive. */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of body) {
    pending += decoder.decode(chunk, { stream: true });
    let end = pending.indexOf('\n');
    while (end >= 0) {
      yield pending.slice(0, end);
      pending = pending.slice(end + 1);
      end = pending.indexOf('\n');
    }
  }
}

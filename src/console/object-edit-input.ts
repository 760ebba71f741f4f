/**
 * Reading the object page's edits: a tag set, and the metadata, content type and stored headers
 * of a copy in place, each checked and refused by name. The S3 handler the edit runs through
 * checks them again (AWS's tag rules, the user metadata size); what is checked here is what the
 * S3 request's own headers would have made impossible (a name or value no header could carry).
 */
import { SvcError } from '../errors/index.js';
import type { ObjectInfo } from '../object/index.js';
import { bodyRecord } from './input.js';

/** Stored headers a GET answers with, which the metadata editor may change. */
export const editableHeaders = ['cache-control', 'content-disposition', 'content-encoding', 'content-language', 'expires'] as const;

const headerSafe = /^[\x20-\x7e]*$/;
const metadataName = /^[a-z0-9][a-z0-9_.-]{0,127}$/;

export function tagsOf(value: unknown): { key: string; value: string }[] {
  if (!Array.isArray(value)) throw new SvcError('InvalidArgument', 'tags must be a list of { key, value } (an empty list removes them)', { field: 'tags' });
  return value.map((item, index) => {
    const record = bodyRecord(item);
    if (typeof record.key !== 'string' || typeof record.value !== 'string') throw new SvcError('InvalidArgument', `tag ${index + 1} needs a key and a value, both text`, { field: 'tags' });
    return { key: record.key, value: record.value };
  });
}

/** The headers of a copy in place: the form's metadata, content type and stored headers; what it leaves out stays as stored. */
export function metadataChange(body: Record<string, unknown>, source: ObjectInfo): Record<string, string> {
  const headers: Record<string, string> = {};
  const contentType = body.contentType === undefined ? (source.contentType ?? '') : body.contentType;
  if (typeof contentType !== 'string' || contentType.length > 256 || !headerSafe.test(contentType)) throw new SvcError('InvalidArgument', 'contentType must be a media type such as text/plain (printable ASCII, 256 characters at most)', { field: 'contentType' });
  if (contentType !== '') headers['content-type'] = contentType;
  const metadata = body.metadata === undefined ? source.userMetadata : textRecord(body.metadata, 'metadata');
  for (const [name, value] of Object.entries(metadata)) {
    const lower = name.toLowerCase();
    if (!metadataName.test(lower)) throw new SvcError('InvalidArgument', `the metadata name '${name.slice(0, 64)}' must be letters, digits and - _ . (128 at most), as an x-amz-meta- header name`, { field: 'metadata' });
    checkHeaderValue(value, `metadata ${lower}`, 'metadata');
    headers[`x-amz-meta-${lower}`] = value;
  }
  const given = body.headers === undefined ? undefined : textRecord(body.headers, 'headers');
  for (const name of Object.keys(given ?? {})) {
    if (!(editableHeaders as readonly string[]).includes(name)) throw new SvcError('InvalidArgument', `headers may set ${editableHeaders.join(', ')}; not ${name.slice(0, 64)}`, { field: 'headers' });
  }
  for (const name of editableHeaders) {
    const value = given === undefined ? source.systemMetadata[name] : given[name];
    if (value === undefined || value === '') continue;
    checkHeaderValue(value, name, 'headers');
    headers[name] = value;
  }
  return headers;
}

function textRecord(value: unknown, field: string): Record<string, string> {
  const record = bodyRecord(value);
  for (const [name, item] of Object.entries(record)) if (typeof item !== 'string') throw new SvcError('InvalidArgument', `${field}.${name.slice(0, 64)} must be text`, { field });
  return record as Record<string, string>;
}

function checkHeaderValue(value: string, what: string, field: string): void {
  if (value.length > 2048 || !headerSafe.test(value)) throw new SvcError('InvalidArgument', `the value of ${what} must be printable ASCII (as a header carries it), 2,048 characters at most`, { field });
}

export function escapeXmlText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

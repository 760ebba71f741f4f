/**
 * A multipart/form-data body as a browser's POST Object sends it: the fields before the file are
 * read into memory (bounded), the file is streamed on without being held, and whatever follows it
 * is drained. A body that is not well-formed is MalformedPOSTRequest.
 */
import { SvcError } from '../../errors/index.js';
import { limits } from '../../util/limits.js';

export interface FormUpload {
  /** Fields before the file, names lower-cased (S3 form field names are case-insensitive). */
  fields: Map<string, string>;
  fileName: string;
  /** The file part's own Content-Type, if it has one. */
  fileContentType?: string;
  file: AsyncIterable<Uint8Array>;
}

export function boundaryOf(contentType: string | undefined): string {
  const match = /^multipart\/form-data\s*;(?:.*;)?\s*boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(contentType ?? '');
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) throw malformed('The Content-Type must be multipart/form-data with a boundary.');
  return boundary;
}

/** Reads the fields up to the file part and hands the file on as a stream. */
export async function readForm(body: AsyncIterable<Uint8Array>, boundary: string): Promise<FormUpload> {
  const reader = new DelimitedReader(body);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  await reader.readUntil(Buffer.from(`--${boundary}`), limits.maxFormFieldsBytes);
  const fields = new Map<string, string>();
  let budget = limits.maxFormFieldsBytes;
  for (;;) {
    const after = await reader.readExactly(2);
    if (after === '--') throw new SvcError('InvalidArgument', 'POST requires exactly one file upload per request.');
    if (after !== '\r\n') throw malformed();
    const part = parsePartHeaders((await reader.readUntil(Buffer.from('\r\n\r\n'), limits.maxFormPartHeaderBytes)).toString('utf8'));
    if (part.name.toLowerCase() === 'file') {
      return { fields, fileName: part.fileName ?? '', ...(part.contentType ? { fileContentType: part.contentType } : {}), file: reader.streamThenDrain(delimiter) };
    }
    const value = await reader.readUntil(delimiter, budget);
    budget -= value.length + part.name.length;
    if (budget < 0) throw new SvcError('MaxMessageLengthExceeded', `The form fields before the file may hold ${limits.maxFormFieldsBytes} bytes at most.`);
    fields.set(part.name.toLowerCase(), value.toString('utf8'));
  }
}

function parsePartHeaders(text: string): { name: string; fileName?: string; contentType?: string } {
  let name: string | undefined;
  let fileName: string | undefined;
  let contentType: string | undefined;
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    const header = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (header === 'content-disposition') {
      name = /(?:^|;)\s*name="([^"]*)"/i.exec(value)?.[1];
      fileName = /;\s*filename="([^"]*)"/i.exec(value)?.[1];
    } else if (header === 'content-type') {
      contentType = value;
    }
  }
  if (name === undefined) throw malformed('A form part has no Content-Disposition name.');
  return { name, ...(fileName !== undefined ? { fileName } : {}), ...(contentType !== undefined ? { contentType } : {}) };
}

function malformed(detail?: string): SvcError {
  return new SvcError('MalformedPOSTRequest', detail ? `The body of your POST request is not well-formed multipart/form-data: ${detail}` : undefined);
}

/** Reads a byte stream in pieces that end at delimiters. */
class DelimitedReader {
  private pending: Buffer = Buffer.alloc(0);
  private readonly iterator: AsyncIterator<Uint8Array>;

  constructor(body: AsyncIterable<Uint8Array>) {
    this.iterator = body[Symbol.asyncIterator]();
  }

  private async fill(): Promise<void> {
    const step = await this.iterator.next();
    if (step.done) throw malformed('the body ended before its closing boundary.');
    this.pending = this.pending.length === 0 ? Buffer.from(step.value) : Buffer.concat([this.pending, step.value]);
  }

  async readExactly(count: number): Promise<string> {
    while (this.pending.length < count) await this.fill();
    const out = this.pending.subarray(0, count).toString('latin1');
    this.pending = this.pending.subarray(count);
    return out;
  }

  /** The bytes before the next delimiter (which is consumed); at most `maxBytes` of them. */
  async readUntil(delimiter: Buffer, maxBytes: number): Promise<Buffer> {
    for (;;) {
      const at = this.pending.indexOf(delimiter);
      if (at >= 0) {
        const out = this.pending.subarray(0, at);
        this.pending = this.pending.subarray(at + delimiter.length);
        return out;
      }
      if (this.pending.length > maxBytes + delimiter.length) throw new SvcError('MaxMessageLengthExceeded', `The form fields before the file may hold ${limits.maxFormFieldsBytes} bytes at most.`);
      await this.fill();
    }
  }

  /** Streams the bytes before the delimiter, then reads what is left of the body (bounded). */
  async *streamThenDrain(delimiter: Buffer): AsyncGenerator<Uint8Array> {
    for (;;) {
      const at = this.pending.indexOf(delimiter);
      if (at >= 0) {
        if (at > 0) yield this.pending.subarray(0, at);
        this.pending = this.pending.subarray(at + delimiter.length);
        break;
      }
      const keep = delimiter.length - 1;
      if (this.pending.length > keep) {
        yield this.pending.subarray(0, this.pending.length - keep);
        this.pending = Buffer.from(this.pending.subarray(this.pending.length - keep));
      }
      await this.fill();
    }
    let rest = this.pending.length;
    for (let step = await this.iterator.next(); !step.done && rest <= limits.maxFormFieldsBytes; step = await this.iterator.next()) rest += step.value.length;
  }
}

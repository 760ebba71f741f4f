/** The streaming multipart/form-data reader of POST Object, and the CORS rule matcher. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { boundaryOf, readForm } from '../src/api/s3/form-body.js';
import { matchingRule, parseCorsConfiguration } from '../src/api/s3/cors.js';
import { codeOf } from './helpers/codes.js';

const boundary = '----svcBoundary7MA4YWxk';

function encodeForm(fields: [string, string][], file: Buffer, after: [string, string][] = []): Buffer {
  const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  return Buffer.concat([
    Buffer.from(fields.map(([name, value]) => part(name, value)).join('')),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/x-test\r\n\r\n`),
    file,
    Buffer.from(`\r\n${after.map(([name, value]) => part(name, value)).join('')}--${boundary}--\r\n`),
  ]);
}

async function* chunked(bytes: Buffer, cuts: number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (const cut of [...new Set(cuts.map((value) => value % (bytes.length + 1)))].sort((a, b) => a - b)) {
    yield bytes.subarray(at, cut);
    at = cut;
  }
  yield bytes.subarray(at);
}

async function collect(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts);
}

describe('POST Object form bodies', () => {
  it('however the body is cut into chunks, the fields and the file come out whole (fast-check prints the seed to replay)', async () => {
    // File bytes drawn from pieces of the delimiter itself, the worst case for a boundary scanner.
    const piece = fc.constantFrom('\r', '\n', '-', '--', `--${boundary}`, `\r\n--${boundary.slice(0, 9)}`, 'x', '\u00e9', '\r\n');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('key', 'policy', 'x-amz-meta-a', 'Content-Type'), fc.string({ maxLength: 20 }).filter((text) => !text.includes('\r\n--'))), { maxLength: 4 }),
        // A sender picks a boundary its content does not hold: the file never contains the whole delimiter.
        fc.array(piece, { maxLength: 40 }).filter((pieces) => !pieces.join('').includes(`\r\n--${boundary}`)),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (fields, pieces, cuts) => {
          const file = Buffer.from(pieces.join(''));
          const body = encodeForm(fields, file, [['after', 'ignored']]);
          const form = await readForm(chunked(body, cuts), boundary);
          expect([...form.fields]).toEqual([...new Map(fields.map(([name, value]) => [name.toLowerCase(), value]))]);
          expect([form.fileName, form.fileContentType]).toEqual(['f.bin', 'application/x-test']);
          expect((await collect(form.file)).equals(file)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses what is not a form upload with named errors', async () => {
    expect(codeOf(() => boundaryOf('text/plain'))).toBe('MalformedPOSTRequest');
    expect(boundaryOf(`multipart/form-data; boundary="${boundary}"`)).toBe(boundary);
    const noFile = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="key"\r\n\r\nk\r\n--${boundary}--\r\n`);
    await expect(readForm(chunked(noFile, []), boundary)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(readForm(chunked(noFile.subarray(0, 30), []), boundary)).rejects.toMatchObject({ code: 'MalformedPOSTRequest' });
    const huge = encodeForm([['key', 'v'.repeat(70 * 1024)]], Buffer.from('x'));
    await expect(readForm(chunked(huge, [1000, 5000]), boundary)).rejects.toMatchObject({ code: 'MaxMessageLengthExceeded' });
  });
});

describe('CORS rules', () => {
  const rules = parseCorsConfiguration(Buffer.from(
    '<CORSConfiguration><CORSRule><AllowedOrigin>https://*.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>x-amz-*</AllowedHeader></CORSRule>' +
      '<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>HEAD</AllowedMethod></CORSRule></CORSConfiguration>',
  ));

  it('the first rule allowing origin, method and every header wins', () => {
    expect(matchingRule(rules, { origin: 'https://a.example', method: 'GET', headers: ['x-amz-date'] })).toBe(rules[0]);
    expect(matchingRule(rules, { origin: 'https://a.example', method: 'GET', headers: ['authorization'] })).toBeUndefined();
    expect(matchingRule(rules, { origin: 'http://a.example', method: 'GET', headers: [] })).toBeUndefined();
    expect(matchingRule(rules, { origin: 'http://anything', method: 'HEAD', headers: [] })).toBe(rules[1]);
    expect(matchingRule(undefined, { origin: 'http://anything', method: 'HEAD', headers: [] })).toBeUndefined();
  });

  it('refuses configurations S3 refuses', () => {
    const config = (rule: string) => Buffer.from(`<CORSConfiguration><CORSRule>${rule}</CORSRule></CORSConfiguration>`);
    expect(codeOf(() => parseCorsConfiguration(config('<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>')))).toBe('InvalidRequest');
    expect(codeOf(() => parseCorsConfiguration(config('<AllowedMethod>GET</AllowedMethod>')))).toBe('MalformedXML');
    expect(codeOf(() => parseCorsConfiguration(config('<AllowedOrigin>*.*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>')))).toBe('InvalidRequest');
    expect(codeOf(() => parseCorsConfiguration(Buffer.from('<CORSConfiguration></CORSConfiguration>')))).toBe('MalformedXML');
  });
});

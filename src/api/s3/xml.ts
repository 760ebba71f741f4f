/** S3 XML: responses with the S3 namespace, and safe parsing of request bodies. */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import { SvcError } from '../../errors/index.js';
import { limits } from '../../util/limits.js';

const namespace = 'http://s3.amazonaws.com/doc/2006-03-01/';

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', suppressEmptyNode: false, processEntities: true });

export function toXml(root: string, content: Record<string, unknown>): string {
  // Control characters in a value (a key, a prefix listed without encoding-type) are written as
  // character references: XML parsers turn a literal carriage return into a line feed, and some
  // trim or drop the others.
  const built = (builder.build({ [root]: { '@_xmlns': namespace, ...content } }) as string).replace(/[\x00-\x08\x0a-\x1f]/g, (character) => (character === '\r' ? '&#xD;' : `&#${character.charCodeAt(0)};`));
  return `<?xml version="1.0" encoding="UTF-8"?>\n${built}`;
}

export function errorXml(code: string, message: string, resource: string, requestId: string, extra: Record<string, unknown> = {}): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ Error: { Code: code, Message: message, Resource: resource, RequestId: requestId, ...extra } }) as string}`;
}

/**
 * Parses a request body, refusing DOCTYPEs/entities, elements nested deeper than
 * `limits.maxXmlDepth` and anything not well-formed (MalformedXML). Whatever the parser throws
 * on hostile input is the client's error, never an internal one.
 */
export function parseXmlBody(bytes: Uint8Array, arrays: string[] = []): Record<string, unknown> {
  if (bytes.length > limits.maxXmlListBodyBytes) throw new SvcError('MaxMessageLengthExceeded', `Your request was too big: the body may hold ${limits.maxXmlListBodyBytes} bytes at most.`);
  const text = Buffer.from(bytes).toString('utf8');
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new SvcError('MalformedXML', 'DOCTYPE and entity declarations are not accepted');
  if (text.trim() === '') throw new SvcError('MalformedXML');
  if (nestingDepth(text) > limits.maxXmlDepth) throw new SvcError('MalformedXML', `The XML nests elements deeper than ${limits.maxXmlDepth} levels.`);
  try {
    if (XMLValidator.validate(text) !== true) throw new SvcError('MalformedXML');
    const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, removeNSPrefix: true, isArray: (name) => arrays.includes(name), processEntities: true, entityDecoder: xmlReferences });
    return parser.parse(text) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof SvcError) throw error;
    throw new SvcError('MalformedXML', undefined, {}, { cause: error });
  }
}

/** The five entities XML predefines; no other is declared (a DOCTYPE is refused). */
const predefinedEntities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** A code point XML allows in a document (its `Char` production). */
function isXmlChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}

/**
 * Text content's references, decoded as XML defines them: the predefined entities and character
 * references, decimal and hexadecimal. Go's encoding/xml (rclone, Go SDKs) writes `"` as `&#34;`,
 * so an ETag in a CompleteMultipartUpload arrives as `&#34;...&#34;`. A reference to a character
 * XML forbids is MalformedXML; an undeclared name is left as written.
 */
const xmlReferences = {
  setExternalEntities: (): void => undefined,
  addInputEntities: (): void => undefined,
  reset: (): void => undefined,
  setXmlVersion: (): void => undefined,
  decode: (text: string): string =>
    text.includes('&')
      ? text.replace(/&(?:#x([0-9a-fA-F]+)|#([0-9]+)|([A-Za-z]+));/g, (reference, hex: string | undefined, decimal: string | undefined, name: string | undefined) => {
          if (name !== undefined) return predefinedEntities[name] ?? reference;
          const code = hex !== undefined ? Number.parseInt(hex, 16) : Number(decimal);
          if (!isXmlChar(code)) throw new SvcError('MalformedXML', `${reference} is not a character XML allows`);
          return String.fromCodePoint(code);
        })
      : text,
};

/**
 * The deepest element nesting of a document, counted without building it (so a hostile depth
 * costs one pass and no stack). Comments, CDATA sections and processing instructions are
 * skipped; a document that is not well-formed gets some number, and the validator refuses it.
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let at = text.indexOf('<'); at >= 0; at = text.indexOf('<', at + 1)) {
    const next = text[at + 1];
    if (text.startsWith('<!--', at)) at = skipPast(text, at, '-->');
    else if (text.startsWith('<![CDATA[', at)) at = skipPast(text, at, ']]>');
    else if (next === '?' || next === '!') at = skipPast(text, at, '>');
    else if (next === '/') depth -= 1;
    else {
      const end = skipPast(text, at, '>');
      if (text[end - 1] !== '/') deepest = Math.max(deepest, (depth += 1));
      at = end;
    }
  }
  return deepest;
}

function skipPast(text: string, from: number, marker: string): number {
  const found = text.indexOf(marker, from);
  return found < 0 ? text.length : found + marker.length - 1;
}

export const xmlLimits = { maxXmlBodyBytes: limits.maxXmlListBodyBytes, maxXmlConfigBodyBytes: limits.maxXmlConfigBodyBytes };

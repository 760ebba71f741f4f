/** S3 XML: responses with the S3 namespace, and safe parsing of request bodies. */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import { SvcError } from '../../errors/index.js';

const namespace = 'http://s3.amazonaws.com/doc/2006-03-01/';
const maxXmlBodyBytes = 1024 * 1024;

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', suppressEmptyNode: false, processEntities: true });

export function toXml(root: string, content: Record<string, unknown>): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ [root]: { '@_xmlns': namespace, ...content } }) as string}`;
}

export function errorXml(code: string, message: string, resource: string, requestId: string, extra: Record<string, unknown> = {}): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ Error: { Code: code, Message: message, Resource: resource, RequestId: requestId, ...extra } }) as string}`;
}

/** Parses a request body, refusing DOCTYPEs/entities and anything not well-formed (MalformedXML). */
export function parseXmlBody(bytes: Uint8Array, arrays: string[] = []): Record<string, unknown> {
  if (bytes.length > maxXmlBodyBytes) throw new SvcError('MalformedXML', 'the XML body is too large');
  const text = Buffer.from(bytes).toString('utf8');
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new SvcError('MalformedXML', 'DOCTYPE and entity declarations are not accepted');
  if (text.trim() === '' || XMLValidator.validate(text) !== true) throw new SvcError('MalformedXML');
  const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, removeNSPrefix: true, isArray: (name) => arrays.includes(name), processEntities: true });
  return parser.parse(text) as Record<string, unknown>;
}

export const xmlLimits = { maxXmlBodyBytes };

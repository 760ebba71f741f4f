import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { nestingDepth, parseXmlBody } from '../src/api/s3/xml.js';
import { isSvcError } from '../src/errors/index.js';
import { limits } from '../src/util/limits.js';
import { codeOf } from './helpers/codes.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('XML request bodies', () => {
  it('counts element nesting without building the document', () => {
    expect(nestingDepth('<?xml version="1.0"?><a><b/><c><d>x</d></c></a>')).toBe(3);
    expect(nestingDepth('<a><!-- <b><c><d> --><![CDATA[<e><f>]]></a>')).toBe(1);
    expect(nestingDepth(`${'<a>'.repeat(50_000)}${'</a>'.repeat(50_000)}`)).toBe(50_000);
  });

  it('refuses deep, oversized and malformed bodies with named client errors', () => {
    const deep = `${'<a>'.repeat(limits.maxXmlDepth + 1)}${'</a>'.repeat(limits.maxXmlDepth + 1)}`;
    expect(codeOf(() => parseXmlBody(bytes(deep)))).toBe('MalformedXML');
    expect(codeOf(() => parseXmlBody(bytes(`<a>${' '.repeat(limits.maxXmlListBodyBytes)}</a>`)))).toBe('MaxMessageLengthExceeded');
    expect(codeOf(() => parseXmlBody(bytes('<a><b></a></b>')))).toBe('MalformedXML');
    expect(parseXmlBody(bytes('<Delete><Object><Key>k</Key></Object></Delete>'), ['Object'])).toEqual({ Delete: { Object: [{ Key: 'k' }] } });
  });

  it('decodes character references and the predefined entities, as Go clients (rclone) write quotes in ETags', () => {
    const go = '<CompleteMultipartUpload><Part><ETag>&#34;9b2cf535f27731c974343645a3985328&#34;</ETag><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>';
    expect(parseXmlBody(bytes(go), ['Part'])).toEqual({ CompleteMultipartUpload: { Part: [{ ETag: '"9b2cf535f27731c974343645a3985328"', PartNumber: '1' }] } });
    expect(parseXmlBody(bytes('<a><k>&#x22;x&#x1F600;&amp;lt;&quot;&apos;&gt;&#9;&#xD;&nbsp;</k></a>'))).toEqual({ a: { k: '"x\u{1F600}&lt;"\'>\t\r&nbsp;' } });
    for (const forbidden of ['&#0;', '&#x1;', '&#xFFFE;', '&#xD800;', '&#x110000;', '&#99999999999;']) expect(codeOf(() => parseXmlBody(bytes(`<a>${forbidden}</a>`))), forbidden).toBe('MalformedXML');
  });

  it('whatever the bytes, the answer is a parsed document or a named client error (fast-check prints the seed to replay)', () => {
    const fragment = fc.constantFrom('<a>', '</a>', '<b x="1">', '</b>', '<c/>', 'text', '&amp;', '&', '<', '>', '<!--', '-->', '<![CDATA[', ']]>', '<?x?>', '"', "'", '\u0000', '\uFFFF', '=');
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 60 }), (parts) => {
        try {
          parseXmlBody(bytes(parts.join('')));
        } catch (error) {
          expect(isSvcError(error) && ['MalformedXML', 'MaxMessageLengthExceeded'].includes(error.code), String(error)).toBe(true);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

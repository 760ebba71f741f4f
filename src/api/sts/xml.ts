/** STS answers in AWS's XML shapes: `<Action>Response` with its result and request id, `ErrorResponse` for refusals. */
import { XMLBuilder } from 'fast-xml-parser';

const namespace = 'https://sts.amazonaws.com/doc/2011-06-15/';

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', suppressEmptyNode: false, processEntities: true });

export function stsResultXml(action: string, result: Record<string, unknown>, requestId: string): string {
  const body = { [`${action}Response`]: { '@_xmlns': namespace, [`${action}Result`]: result, ResponseMetadata: { RequestId: requestId } } };
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build(body) as string}`;
}

/** `Type` is Sender for the caller's mistakes (4xx), Receiver for the server's. */
export function stsErrorXml(code: string, message: string, httpStatus: number, requestId: string): string {
  const body = { ErrorResponse: { '@_xmlns': namespace, Error: { Type: httpStatus < 500 ? 'Sender' : 'Receiver', Code: code, Message: message }, RequestId: requestId } };
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build(body) as string}`;
}

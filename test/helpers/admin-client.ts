/** Signs and sends admin API requests (SigV4, root credentials by default) for tests. */
import { jsonOrRaw, sendSigned } from '../../src/cli/rc/signed-request.js';
import { testCredentials } from './server-process.js';

export interface AdminAnswer {
  status: number;
  body: Record<string, any>;
  /** The answer's x-amz-request-id. */
  requestId?: string;
}

export async function admin(baseUrl: string, method: 'GET' | 'POST', path: string, rawQuery = '', options: { credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }; unsigned?: boolean; body?: string; bareQuestionMark?: boolean } = {}): Promise<AdminAnswer> {
  const credentials = options.credentials ?? testCredentials;
  const answer = await sendSigned({
    endpoint: baseUrl,
    accessKey: credentials.accessKeyId,
    secretKey: credentials.secretAccessKey,
    ...(options.credentials?.sessionToken === undefined ? {} : { sessionToken: options.credentials.sessionToken }),
    method,
    path,
    rawQuery,
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(options.unsigned ? { unsigned: true } : {}),
    ...(options.bareQuestionMark ? { bareQuestionMark: true } : {}),
  });
  return { status: answer.status, body: jsonOrRaw(answer.text), ...(answer.requestId === undefined ? {} : { requestId: answer.requestId }) };
}

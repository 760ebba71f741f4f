/**
 * Raw STS form calls for the tests of answer shapes and refusals, where a real client would not
 * send what is being refused (a wrong service scope, a bad duration, no signature): AssumeRole
 * signed with SigV4 by `@smithy/signature-v4`, AssumeRoleWithWebIdentity unsigned, over fetch;
 * answers parsed with fast-xml-parser. The real clients (the AWS SDK's STS client, the AWS CLI,
 * boto3) are tested beside them.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { XMLParser } from 'fast-xml-parser';

export interface StsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface StsAnswer {
  status: number;
  text: string;
  /** The parsed body without namespaces: `AssumeRoleResponse`, `ErrorResponse`, .... */
  xml: Record<string, any>;
}

const parser = new XMLParser({ removeNSPrefix: true, parseTagValue: false });

/** An STS call; signed by `credentials` (credential scope service `service`, default sts) unless none are given. */
export async function stsCall(baseUrl: string, parameters: Record<string, string>, credentials?: StsCredentials, service = 'sts'): Promise<StsAnswer> {
  const url = new URL(baseUrl);
  const body = new URLSearchParams({ Version: '2011-06-15', ...parameters }).toString();
  let headers: Record<string, string> = { host: url.host, 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };
  if (credentials) {
    const signer = new SignatureV4({ service, region: 'us-east-1', credentials, sha256: Sha256, applyChecksum: false });
    const signed = await signer.sign({ method: 'POST', protocol: url.protocol, hostname: url.hostname, port: Number(url.port), path: '/', headers, body });
    headers = signed.headers as Record<string, string>;
  }
  const { host: _host, ...sendHeaders } = headers;
  const response = await fetch(`${url.origin}/`, { method: 'POST', headers: sendHeaders, body });
  const text = await response.text();
  return { status: response.status, text, xml: parser.parse(text) as Record<string, any> };
}

/** The temporary credentials of a successful AssumeRole or AssumeRoleWithWebIdentity answer. */
export function credentialsOf(answer: StsAnswer): StsCredentials {
  const result = answer.xml.AssumeRoleResponse?.AssumeRoleResult ?? answer.xml.AssumeRoleWithWebIdentityResponse?.AssumeRoleWithWebIdentityResult;
  if (answer.status !== 200 || !result) throw new Error(`STS answered ${answer.status}: ${answer.text}`);
  const credentials = result.Credentials;
  return { accessKeyId: credentials.AccessKeyId, secretAccessKey: credentials.SecretAccessKey, sessionToken: credentials.SessionToken };
}

/** The code of an STS ErrorResponse. */
export function stsErrorCode(answer: StsAnswer): string | undefined {
  return answer.xml.ErrorResponse?.Error?.Code;
}

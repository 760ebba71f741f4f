/** A console server for tests (a real svc process with its console listener) and a signed-in API client. */
import { freePort, startSvc, testCredentials, type SvcProcess } from './server-process.js';

export interface ConsoleServer {
  server: SvcProcess;
  consoleUrl: string;
}

export async function startConsoleServer(args: string[], env: Record<string, string> = {}, options: { readyTimeoutMs?: number } = {}): Promise<ConsoleServer> {
  const consolePort = await freePort();
  const server = await startSvc({ args, env: { SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}`, ...env }, ...options });
  return { server, consoleUrl: `http://127.0.0.1:${consolePort}` };
}

export interface ConsoleAnswer {
  status: number;
  headers: Headers;
  body: Record<string, any>;
}

export interface ConsoleSession {
  cookie: string;
  csrfToken: string;
  call(method: string, path: string, options?: { body?: unknown; raw?: Buffer | string; headers?: Record<string, string>; csrf?: boolean; cookie?: boolean }): Promise<ConsoleAnswer>;
}

/** One console API call: JSON in and out, with or without the session cookie and CSRF token. */
export async function consoleCall(consoleUrl: string, method: string, path: string, options: { body?: unknown; raw?: Buffer | string; headers?: Record<string, string>; cookie?: string; csrfToken?: string } = {}): Promise<ConsoleAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.cookie) headers.cookie = options.cookie;
  if (options.csrfToken) headers['x-csrf-token'] = options.csrfToken;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.raw !== undefined) headers['content-type'] ??= 'application/octet-stream';
  const response = await fetch(`${consoleUrl}/svc/console/api/${path}`, {
    method,
    headers,
    redirect: 'manual',
    ...(options.body !== undefined ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) } : {}),
    ...(options.raw !== undefined ? { body: options.raw, duplex: 'half' } : {}),
  } as RequestInit);
  const text = await response.text();
  let body: Record<string, any> = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = { raw: text };
  }
  return { status: response.status, headers: response.headers, body };
}

export async function signIn(consoleUrl: string, credentials = { accessKey: testCredentials.accessKeyId, secretKey: testCredentials.secretAccessKey }): Promise<ConsoleSession> {
  const answer = await consoleCall(consoleUrl, 'POST', 'session', { body: credentials });
  if (answer.status !== 200) throw new Error(`sign-in failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  const cookie = answer.headers.getSetCookie()[0]!.split(';')[0]!;
  const csrfToken = String(answer.body.csrfToken);
  return {
    cookie,
    csrfToken,
    call: (method, path, options = {}) => {
      const { cookie: withCookie, csrf, ...rest } = options;
      return consoleCall(consoleUrl, method, path, { ...rest, ...(withCookie === false ? {} : { cookie }), ...(csrf === false ? {} : { csrfToken }) });
    },
  };
}

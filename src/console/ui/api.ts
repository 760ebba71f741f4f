/**
 * The console's one way to the server: relative URLs under the page's own origin
 * (`api/...` from `/svc/console/`), the session cookie sent by the browser, the CSRF token on
 * every call that changes state. Errors come back as { Code, Message }.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

let csrfToken = '';
let onSignedOut: () => void = () => undefined;

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

export function apiUrl(path: string, query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, value);
  const text = search.toString();
  return `api/${path}${text ? `?${text}` : ''}`;
}

export async function errorOf(response: Response): Promise<ApiError> {
  let body: { Code?: string; Message?: string; Details?: Record<string, unknown> } = {};
  try {
    body = await response.json();
  } catch {
    // not JSON (a proxy's page)
  }
  return new ApiError(response.status, body.Code ?? `HTTP${response.status}`, body.Message ?? response.statusText, body.Details ?? {});
}

export async function api<T = Record<string, unknown>>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: { query?: Record<string, string | undefined>; body?: unknown; quietSignOut?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(apiUrl(path, options.query), {
    method,
    headers,
    credentials: 'same-origin',
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  if (!response.ok) {
    const error = await errorOf(response);
    if (error.code === 'ConsoleSignInRequired' && !options.quietSignOut) onSignedOut();
    throw error;
  }
  return (await response.json()) as T;
}

export function csrfHeader(): string {
  return csrfToken;
}

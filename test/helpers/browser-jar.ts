/**
 * A browser's cookie handling, enough to follow a sign-in through redirects with fetch: cookies
 * kept per host, sent back on later requests to that host, removed by Max-Age=0.
 */
export class CookieJar {
  private readonly byHost = new Map<string, Map<string, string>>();

  store(url: string, response: Response): void {
    const host = new URL(url).host;
    const cookies = this.byHost.get(host) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      if (/max-age=0/i.test(line)) cookies.delete(name);
      else cookies.set(name, pair!.slice(at + 1).trim());
    }
    this.byHost.set(host, cookies);
  }

  header(url: string): string {
    return [...(this.byHost.get(new URL(url).host) ?? new Map<string, string>())].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  get(url: string, name: string): string | undefined {
    return this.byHost.get(new URL(url).host)?.get(name);
  }

  /** One request with this jar's cookies, redirects not followed. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.header(url);
    if (cookie) headers.set('cookie', cookie);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.store(url, response);
    return response;
  }

  /** Follows redirects (GET) until `stop` says so or a non-redirect answer; returns the last URL and answer. */
  async follow(url: string, stop: (next: string) => boolean = () => false, init: RequestInit = {}): Promise<{ url: string; response: Response }> {
    let current = url;
    let response = await this.fetch(current, init);
    for (let hops = 0; hops < 20 && response.status >= 300 && response.status < 400; hops += 1) {
      const next = new URL(response.headers.get('location')!, current).href;
      await response.body?.cancel();
      if (stop(next)) return { url: next, response };
      current = next;
      response = await this.fetch(current);
    }
    return { url: current, response };
  }
}

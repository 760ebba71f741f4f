/**
 * The console on a real cluster of two svc processes, each with its console listener: a session
 * signed in on one node is taken by the other (its cookie and CSRF token, through the API and in
 * Chromium), a sign-out on one node ends it on both at once, and so does a session ended from the
 * sessions page of a node it never used. The Cluster page's per-node table at 390 px: the document
 * does not overflow sideways (the table scrolls in its own card); axe finds no serious or critical
 * violation at 1440×900 and 390×844. Screenshots under test-output/console/cluster-nodes-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { HeadBucketCommand } from '@aws-sdk/client-s3';
import { repoRoot, s3ClientFor, testCredentials } from './helpers/server-process.js';
import { startProcessCluster, type ProcessCluster } from './helpers/process-cluster.js';
import { consoleCall, signIn, type ConsoleSession } from './helpers/console-client.js';
import { chromiumPresent, documentOverflow, launchChromium, signInOnPage } from './helpers/chromium.js';
import { seriousViolations } from './helpers/axe.js';
import { waitFor } from './helpers/poll.js';

const haveChromium = chromiumPresent('the console cluster browser test');
const shots = join(repoRoot, 'test-output/console');

let cluster: ProcessCluster;
let one: string;
let two: string;
let browser: Browser | undefined;

/** The session's cookie used on another node, with its CSRF token. */
const on = (consoleUrl: string, session: ConsoleSession) => (method: string, path: string, body?: unknown) => consoleCall(consoleUrl, method, path, { cookie: session.cookie, csrfToken: session.csrfToken, ...(body === undefined ? {} : { body }) });

describe('the console across the nodes of a cluster', () => {
  beforeAll(async () => {
    cluster = await startProcessCluster({ nodes: 2, drivesPerNode: 2, env: { SVC_CONSOLE_ENABLE: 'true' }, readyTimeoutMs: 150_000 });
    [one, two] = cluster.nodes.map((node) => node!.consoleUrl!) as [string, string];
    expect(one).not.toBe(two);
    // The console listens once storage is up, just after the S3 listener reports ready.
    for (const url of [one, two]) await waitFor(`the console at ${url}`, async () => (await fetch(`${url}/svc/console/health`)).ok, { timeoutMs: 30_000, intervalMs: 100 });
    await mkdir(shots, { recursive: true });
    if (haveChromium) browser = await launchChromium();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await cluster?.destroy();
  });

  it('takes a session signed in on one node on the other, and a sign-out on either ends it on both', async () => {
    const session = await signIn(one);
    const there = on(two, session);
    const me = await there('GET', 'session');
    expect([me.status, me.body.accessKey]).toEqual([200, testCredentials.accessKeyId]);
    // A change on the other node with the CSRF token the first handed out.
    const created = await there('POST', 'buckets', { name: 'made-on-node-two' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    await s3ClientFor(cluster.urls[0]!).send(new HeadBucketCommand({ Bucket: 'made-on-node-two' }));

    // Signed out on node one: node two refuses the cookie too, before the idle expiry.
    expect((await on(one, session)('DELETE', 'session')).status).toBe(200);
    for (const url of [one, two]) {
      const refused = await on(url, session)('GET', 'buckets');
      expect([refused.status, refused.body.Code], url).toEqual([401, 'ConsoleSignInRequired']);
    }

    // Ended from node one's sessions page (it reached node one once); it was used on node two.
    const ended = await signIn(two);
    const keeper = await signIn(one);
    expect((await on(one, ended)('GET', 'session')).status).toBe(200);
    const listed = (await on(one, keeper)('GET', 'sessions')).body.sessions as { handle: string; current: boolean; accessKey: string }[];
    const handles = listed.filter((entry) => !entry.current).map((entry) => entry.handle);
    expect(handles.length).toBe(1);
    expect((await on(one, keeper)('DELETE', `sessions/${handles[0]}`)).status).toBe(200);
    const refused = await on(two, ended)('GET', 'buckets');
    expect([refused.status, refused.body.Code]).toEqual([401, 'ConsoleSignInRequired']);
    // The session that ended it goes on, on either node.
    expect((await on(two, keeper)('GET', 'buckets')).status).toBe(200);
  }, 180_000);

  it.skipIf(!haveChromium)('carries a browser session to the other node and signs it out there from the first', async () => {
    const context = await browser!.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await signInOnPage(page, one);
    // The same cookie given to the other node's address (a browser keeps cookies per host).
    const [cookie] = (await context.cookies(`${one}/svc/console/`)).filter((entry) => entry.name === 'svc_console_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie!.value.length).toBeGreaterThan(20);
    await context.addCookies([{ name: cookie!.name, value: cookie!.value, domain: new URL(two).hostname, path: '/svc/console/', httpOnly: true, sameSite: 'Strict' }]);
    const other = await context.newPage();
    await other.goto(`${two}/svc/console/#/cluster`);
    await other.getByRole('heading', { name: 'Cluster' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Access key').waitFor();
    await other.reload();
    await other.getByLabel('Access key').waitFor();
    expect(await other.getByRole('heading', { name: 'Cluster' }).count()).toBe(0);
    await context.close();
  }, 180_000);

  it.skipIf(!haveChromium)('keeps the per-node table inside a phone screen, the page not overflowing', async () => {
    for (const [name, viewport] of [
      ['wide', { width: 1440, height: 900 }],
      ['narrow', { width: 390, height: 844 }],
    ] as const) {
      const page: Page = await (await browser!.newContext({ viewport })).newPage();
      await signInOnPage(page, one);
      await page.goto(`${one}/svc/console/#/cluster`);
      const nodes = page.getByRole('table', { name: 'Nodes' });
      await expect.poll(() => nodes.locator('tbody tr').count(), { timeout: 15_000 }).toBe(2);
      expect(await nodes.textContent()).toContain(cluster.urls[1]!.replace('http://', ''));
      expect(await documentOverflow(page), `${name}: the document is wider than the screen`).toBeLessThanOrEqual(0);
      // The table's card takes the focus from the keyboard, so it can be scrolled sideways without a mouse.
      expect(await page.getByRole('region', { name: 'Nodes (2)' }).getAttribute('tabindex')).toBe('0');
      await page.screenshot({ path: join(shots, `cluster-nodes-${name}.png`), fullPage: name === 'narrow' });
      expect(await seriousViolations(page)).toEqual([]);
      await page.context().close();
    }
  }, 180_000);
});

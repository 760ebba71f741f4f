/**
 * The reverse-proxy deployment on loopback, with real programs: an ACME CA (Debian `pebble`), a
 * DNS server that answers every test name with one loopback address (`pebble-challtestsrv`), and
 * Caddy running deploy/Caddyfile on that address's ports 80 and 443. Nothing on the machine is
 * changed: names resolve through the test's own DNS (for pebble), a `lookup` in Node agents, a
 * CONNECT proxy for the AWS CLI and host-resolver rules for Chromium.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type Server } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { freePort, repoRoot } from './server-process.js';

export interface Program {
  child: ChildProcess;
  logs(): string;
  stop(): Promise<void>;
}

export function startProgram(command: string, args: string[], env: Record<string, string> = {}): Program {
  const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-200_000)));
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-200_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    logs: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Why the proxy tests cannot run here (undefined when they can); under CI a missing program is a failure. */
export function proxyToolsMissing(): string | undefined {
  const missing = ['caddy', 'pebble', 'pebble-challtestsrv'].filter((name) => !existsSync(`/usr/bin/${name}`));
  if (missing.length === 0) return undefined;
  const reason = `${missing.join(', ')} not installed (Debian packages caddy and pebble; .ci/run installs them)`;
  if (process.env.CI === 'true') throw new Error(`CI requires ${reason}`);
  return reason;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, logs: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\n${logs().slice(-6_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function portsFree(ip: string, ports: number[]): Promise<void> {
  for (const port of ports) {
    await new Promise<void>((resolve, reject) => {
      const probe = createHttpServer();
      probe.once('error', (error) => reject(new Error(`${ip}:${port} is taken (${String(error)}): the proxy test needs it for Caddy`)));
      probe.listen(port, ip, () => probe.close(() => resolve()));
    });
  }
}

export interface AcmeCa {
  directory: string;
  /** PEM of the CA that signs pebble's own listener (Caddy must trust it to talk ACME). */
  listenerCaFile: string;
  /** PEM of the root pebble issues certificates under: what clients trust. */
  rootPem(): Promise<string>;
  programs: Program[];
}

/**
 * Pebble validating HTTP-01 on `ip`:80, its DNS answered by challtestsrv with `ip` for every name.
 * Its ACME directory listens on `listenIp` (127.0.0.1 unless a container must reach it).
 */
export async function startAcmeCa(dir: string, ip: string, listenIp = '127.0.0.1'): Promise<AcmeCa> {
  const [acmePort, managementPort, dnsPort, challManagementPort] = [await freePort(listenIp), await freePort(), await freePort(), await freePort()];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', '/CN=svc test pebble listener CA', '-keyout', join(dir, 'listener-ca.key'), '-out', join(dir, 'listener-ca.pem')], { stdio: 'ignore' });
  execFileSync('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', join(dir, 'listener.key'), '-out', join(dir, 'listener.csr')], { stdio: 'ignore' });
  await writeFile(join(dir, 'listener.ext'), `subjectAltName=IP:127.0.0.1,IP:${listenIp},DNS:localhost\n`);
  execFileSync('openssl', ['x509', '-req', '-in', join(dir, 'listener.csr'), '-CA', join(dir, 'listener-ca.pem'), '-CAkey', join(dir, 'listener-ca.key'), '-CAcreateserial', '-days', '2', '-extfile', join(dir, 'listener.ext'), '-out', join(dir, 'listener.pem')], { stdio: 'ignore' });
  await writeFile(join(dir, 'pebble.json'), JSON.stringify({ pebble: { listenAddress: `${listenIp}:${acmePort}`, managementListenAddress: `127.0.0.1:${managementPort}`, certificate: join(dir, 'listener.pem'), privateKey: join(dir, 'listener.key'), httpPort: 80, tlsPort: 443, ocspResponderURL: '', externalAccountBindingRequired: false } }));
  const dns = startProgram('/usr/bin/pebble-challtestsrv', ['-defaultIPv4', ip, '-defaultIPv6', '', '-dns01', `127.0.0.1:${dnsPort}`, '-http01', '', '-https01', '', '-tlsalpn01', '', '-management', `127.0.0.1:${challManagementPort}`]);
  const pebble = startProgram('/usr/bin/pebble', ['-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dnsPort}`], { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' });
  const listenerCa = await readFile(join(dir, 'listener-ca.pem'), 'utf8');
  const fetchManaged = (path: string) =>
    new Promise<string>((resolve, reject) => {
      const agent = new HttpsAgent({ ca: listenerCa });
      import('node:https').then(({ get }) =>
        get(`https://127.0.0.1:${managementPort}${path}`, { agent }, (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => (response.statusCode === 200 ? resolve(body) : reject(new Error(`${path}: ${response.statusCode}`))));
        }).on('error', reject),
      );
    });
  await waitFor('pebble listening', () => fetchManaged('/roots/0'), 15_000, () => pebble.logs() + dns.logs());
  return { directory: `https://${listenIp}:${acmePort}/dir`, listenerCaFile: join(dir, 'listener-ca.pem'), rootPem: () => fetchManaged('/roots/0'), programs: [dns, pebble] };
}

export interface CaddySites {
  s3Host: string;
  consoleHost: string;
  s3Upstreams: string[];
  consoleUpstreams: string[];
  /** Site blocks appended to the shipped Caddyfile (test-only variants). */
  extraSites?: string;
}

export interface Caddy extends Program {
  storage: string;
}

/** Caddy with deploy/Caddyfile as shipped (plus any extra sites), bound to `ip`, issuing from `ca`. */
export async function startCaddy(dir: string, ip: string, ca: AcmeCa, sites: CaddySites): Promise<Caddy> {
  await portsFree(ip, [80, 443]);
  const shipped = await readFile(join(repoRoot, 'deploy/Caddyfile'), 'utf8');
  const config = join(dir, 'Caddyfile');
  await writeFile(config, `${shipped}\n${sites.extraSites ?? ''}`);
  const storage = join(dir, 'caddy-storage');
  const program = startProgram('/usr/bin/caddy', ['run', '--config', config, '--adapter', 'caddyfile'], {
    XDG_CONFIG_HOME: join(dir, 'xdg-config'),
    XDG_DATA_HOME: join(dir, 'xdg-data'),
    SVC_S3_HOST: sites.s3Host,
    SVC_CONSOLE_HOST: sites.consoleHost,
    SVC_S3_UPSTREAMS: sites.s3Upstreams.join(' '),
    SVC_CONSOLE_UPSTREAMS: sites.consoleUpstreams.join(' '),
    SVC_ACME_EMAIL: 'ops@svc.test',
    SVC_ACME_CA: ca.directory,
    SVC_CADDY_STORAGE: storage,
    SVC_CADDY_GLOBAL: `acme_ca_root ${ca.listenerCaFile}\n\tdefault_bind ${ip}\n\tadmin off`,
  });
  return { ...program, storage };
}

/** The certificate and key files Caddy stored for `host`, once both exist. */
export async function storedCertificate(storage: string, host: string): Promise<{ certificate: string; key: string } | undefined> {
  const issuers = join(storage, 'certificates');
  if (!existsSync(issuers)) return undefined;
  for (const issuer of await readdir(issuers)) {
    const certificate = join(issuers, issuer, host, `${host}.crt`);
    const key = join(issuers, issuer, host, `${host}.key`);
    if (existsSync(certificate) && existsSync(key) && (await stat(certificate)).size > 0) return { certificate, key };
  }
  return undefined;
}

/** An HTTPS agent that resolves the test names to `ip` and trusts `ca`. */
export function resolvingAgent(ip: string, ca: string, names: string[]): HttpsAgent {
  return new HttpsAgent({
    ca,
    keepAlive: true,
    lookup: ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      const address = names.includes(hostname) ? ip : hostname;
      if (options?.all) callback(null, [{ address, family: 4 }]);
      else callback(null, address, 4);
    }) as never,
  });
}

/** One HTTPS GET through `agent` (which resolves the test names and trusts the test CA). */
export function httpsGet(url: string, agent: HttpsAgent, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpsRequest(url, { agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

/** An HTTP CONNECT proxy that sends the test names to `ip` (for clients with no resolver hook, like the AWS CLI). */
export async function startConnectProxy(ip: string, names: string[]): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createHttpServer((_request, response) => response.writeHead(405).end());
  server.on('connect', (request, socket, head) => {
    const [host, port] = (request.url ?? '').split(':');
    if (!names.includes(host!)) return void socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    const upstream = connect(Number(port ?? 443), ip, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/**
 * The conformance checks run behind a reverse proxy: those a proxy can change. How a request is
 * signed and addressed (SigV4 and V2, presigned URLs, POST forms, keys of every shape), framed and
 * streamed (single and multipart bodies, checksums, copies, SSE headers), answered (ranges,
 * conditions, errors), and a listing's query parameters; with the admin suite, its calls. Left
 * out are checks of what the server does with a request that arrived intact (versioning, object
 * lock, lifecycle, ACLs, policies, paging), which `conformance.test.ts` runs against the server
 * itself. `SVC_TEST_PROXY_CONFORMANCE=all` runs every check behind the proxies too.
 */
export function proxyConformanceSelection(): string[] {
  if (process.env.SVC_TEST_PROXY_CONFORMANCE === 'all') return [];
  const prefixes = [
    's3.sigv4.', 's3.sigv2.', 's3.auth.', 's3.presigned.', 's3.post.', 's3.keys.', 's3.object.', 's3.put.', 's3.get.', 's3.delete',
    's3.multipart.', 's3.checksum.', 's3.copy.', 's3.sse.', 's3.range.', 's3.conditional', 's3.error.', 's3.read-after-write',
    's3.bucket.', 's3.expected-owner.', 's3.list.v2.delimiter', 's3.list.v1.delimiter', 's3.list.v2.after-delete', 'admin.',
  ];
  return ['--only', prefixes.join(',')];
}

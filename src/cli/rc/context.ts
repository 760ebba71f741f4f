/**
 * What every `rc` command works with: the alias configuration, output (tables for people, JSON
 * for scripts, progress on a terminal), signed admin requests, and an S3 client per alias.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { jsonOrRaw, sendSigned } from './signed-request.js';

/** A failure reported as one line `rc: <message>` with a non-zero exit. */
export class RcError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'RcError';
  }
}

export interface Alias {
  url: string;
  accessKey: string;
  secretKey: string;
}

export interface RcIo {
  env: Record<string, string | undefined>;
  out(text: string): void;
  err(text: string): void;
  /** Raw bytes to standard output (rc cat). */
  write(bytes: Uint8Array): Promise<void>;
  isTTY: boolean;
}

export interface RcContext {
  io: RcIo;
  json: boolean;
  configPath: string;
  readAliases(): Promise<Record<string, Alias>>;
  writeAliases(aliases: Record<string, Alias>): Promise<void>;
  alias(name: string): Promise<Alias>;
  s3(alias: Alias): S3Client;
  admin(alias: Alias, method: 'GET' | 'POST', path: string, query?: Record<string, string>, body?: string): Promise<Record<string, any>>;
  /** Prints a value: JSON with --json, else the human form. */
  print(value: unknown, human: () => string): void;
  progress(label: string): Progress;
}

export interface Progress {
  update(done: number, total: number, detail?: string): void;
  finish(): void;
}

export function createContext(io: RcIo, json: boolean): RcContext {
  const configDir = io.env.RC_CONFIG_DIR ?? join(homedir(), '.rc');
  const configPath = join(configDir, 'config.json');
  const context: RcContext = {
    io,
    json,
    configPath,
    async readAliases() {
      try {
        const parsed = JSON.parse(await readFile(configPath, 'utf8')) as { aliases?: Record<string, Alias> };
        return parsed.aliases ?? {};
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
        throw new RcError(`cannot read ${configPath}: ${(error as Error).message}`);
      }
    },
    async writeAliases(aliases) {
      await mkdir(configDir, { recursive: true, mode: 0o700 });
      await writeFile(configPath, `${JSON.stringify({ version: 1, aliases }, null, 2)}\n`, { mode: 0o600 });
      await chmod(configPath, 0o600);
    },
    async alias(name) {
      const aliases = await context.readAliases();
      const found = aliases[name];
      if (!found) throw new RcError(`unknown alias '${name}'; add it with: rc alias set ${name} <url> <access-key> <secret-key>`);
      return found;
    },
    s3: (alias) =>
      new S3Client({ endpoint: alias.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: alias.accessKey, secretAccessKey: alias.secretKey }, maxAttempts: 3 }),
    admin: (alias, method, path, query = {}, body = '') => adminRequest(alias, method, path, query, body),
    print(value, human) {
      io.out(json ? JSON.stringify(value, null, 2) : human());
    },
    progress: (label) => progressBar(io, label),
  };
  return context;
}

async function adminRequest(alias: Alias, method: 'GET' | 'POST', path: string, query: Record<string, string>, body: string): Promise<Record<string, any>> {
  const origin = new URL(alias.url).origin;
  let answer: { status: number; text: string };
  try {
    answer = await sendSigned({ endpoint: alias.url, accessKey: alias.accessKey, secretKey: alias.secretKey, method, path, rawQuery: new URLSearchParams(query).toString(), body });
  } catch (error) {
    throw new RcError(`cannot reach ${origin}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`);
  }
  const parsed = jsonOrRaw(answer.text);
  if ('raw' in parsed) throw new RcError(`${origin} answered ${answer.status} without JSON (is it an svc server?)`);
  if (answer.status >= 400) throw new RcError(`${parsed.Code ?? answer.status}: ${parsed.Message ?? 'request failed'}`);
  return parsed;
}

function progressBar(io: RcIo, label: string): Progress {
  let last = '';
  return {
    update(done, total, detail = '') {
      if (!io.isTTY) return;
      const fraction = total > 0 ? Math.min(1, done / total) : 0;
      const width = 30;
      const filled = Math.round(fraction * width);
      const line = `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${detail}`;
      if (line !== last) io.err(`\r${line}`);
      last = line;
    },
    finish() {
      if (io.isTTY && last) io.err('\n');
    },
  };
}

/** Aligned columns for people. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  return cells.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

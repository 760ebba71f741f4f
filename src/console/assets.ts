/**
 * The browser app's built files (`npm run build` writes them to dist/console-ui/), read once at
 * startup and served from memory (gzipped when the browser accepts it): only files of that
 * folder, by exact name, with an ETag.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { packagedConsoleFiles } from '../util/packaged.js';

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
};

interface Asset {
  bytes: Buffer;
  /** The same bytes gzipped, for browsers that accept it. */
  gzipped: Buffer;
  etag: string;
  contentType: string;
}

export interface ConsoleAssets {
  /** Where the files came from ('embedded' in the single executable), or undefined when the app is not built. */
  directory: string | undefined;
  send(reply: FastifyReply, name: string): Promise<FastifyReply>;
}

/** dist/console-ui seen from the build (dist/src/console) or from the sources (src/console). */
export function findAssetDirectory(): string | undefined {
  const candidates = ['../../console-ui/', '../../dist/console-ui/'].map((relative) => fileURLToPath(new URL(relative, import.meta.url)));
  return candidates.find((candidate) => existsSync(join(candidate, 'index.html')));
}

function assetOf(name: string, bytes: Buffer): Asset {
  return { bytes, gzipped: gzipSync(bytes, { level: 9 }), etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"`, contentType: contentTypes[extname(name)] ?? 'application/octet-stream' };
}

export function loadConsoleAssets(directory?: string): ConsoleAssets {
  const assets = new Map<string, Asset>();
  const embedded = directory === undefined ? packagedConsoleFiles() : undefined;
  if (embedded) {
    directory = 'embedded';
    for (const file of embedded) assets.set(file.name, assetOf(file.name, file.bytes));
  }
  directory ??= findAssetDirectory();
  if (directory && !embedded) {
    for (const name of readdirSync(directory)) {
      const path = join(directory, name);
      if (!statSync(path).isFile()) continue;
      assets.set(name, assetOf(name, readFileSync(path)));
    }
  }
  return {
    directory,
    send: async (reply, name) => {
      const asset = assets.get(name);
      if (!asset) {
        if (name === 'index.html') return reply.code(503).header('content-type', 'text/plain; charset=utf-8').send('The console is not built: run `npm run build`.\n');
        return reply.code(404).header('content-type', 'text/plain; charset=utf-8').send('Not found.\n');
      }
      const fresh = reply.request.headers['if-none-match'] === asset.etag;
      reply.header('etag', asset.etag).header('vary', 'accept-encoding').header('cache-control', name === 'index.html' ? 'no-cache' : 'public, max-age=300');
      if (fresh) return reply.code(304).send();
      reply.code(200).header('content-type', asset.contentType);
      const gzip = /\bgzip\b/.test(String(reply.request.headers['accept-encoding'] ?? '')) && asset.gzipped.length < asset.bytes.length;
      return gzip ? reply.header('content-encoding', 'gzip').send(asset.gzipped) : reply.send(asset.bytes);
    },
  };
}

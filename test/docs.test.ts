/**
 * The documentation is checked like code: the runnable shell blocks of README.md and docs/ run
 * against servers they start on loopback and must print what the page shows; every relative link
 * and anchor resolves; every SVC_ variable the server reads is in docs/configuration.md; every S3
 * operation the router dispatches is in docs/s3-compatibility.md; the README stays short.
 * The markers are described in docs/README.md ("Runnable examples").
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { drawSubnet, openDocShell, pagePrefix, type DocShell } from './helpers/doc-shell.js';
import { missingTool } from './helpers/external-tools.js';
import { anchorsOf, brokenLinks, markdownPages, outputMatches, runnableBlocks, slugOf, withoutCode } from './helpers/markdown.js';
import { repoRoot } from './helpers/server-process.js';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
const blockTimeoutMs = 180_000;

describe('markdown helpers', () => {
  it('slugs headings as GitHub does', () => {
    expect(slugOf('Listing quorum')).toBe('listing-quorum');
    expect(slugOf('The `rc` client')).toBe('the-rc-client');
    expect(slugOf('Heal, read-repair and drive replacement')).toBe('heal-read-repair-and-drive-replacement');
    expect(slugOf('1. Expand: add a pool, then rebalance')).toBe('1-expand-add-a-pool-then-rebalance');
    expect(slugOf('SVC_* variables')).toBe('svc_-variables');
    expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n')]).toEqual(['a', 'a-1']);
  });

  it('matches output with placeholders', () => {
    expect(outputMatches('size 3 B\n…\nend', 'size 3 B\nx\ny\nend')).toBe(true);
    expect(outputMatches('id …, size 3 B', 'id 1234-abcd, size 3 B')).toBe(true);
    expect(outputMatches('A  B\n1  2', 'A    B\n1    2\n')).toBe(true);
    expect(outputMatches('readable yes', 'readable no')).toBe(false);
    expect(outputMatches('a\n…', 'b')).toBe(false);
    expect(outputMatches('a', 'a\nb')).toBe(false);
  });
});

describe('moved addresses', () => {
  it('200 subnets drawn in one process: each new, none repeats the draw before it, and every page keeps its length when moved', () => {
    const pages = markdownPages(repoRoot).filter((page) => runnableBlocks(read(page)).length > 0);
    expect(pages).toContain('docs/tutorial-erasure.md');
    // The tutorial uploads a script holding an address and shows the size of its shards.
    expect(read('docs/tutorial-erasure.md')).toMatch(/url=http:\/\/127\.0\.0\.1:\d+\//);
    const texts = pages.flatMap((page) => runnableBlocks(read(page)).flatMap((block) => [block.body, block.expected ?? '']));
    let previous: string | undefined;
    for (let draw = 0; draw < 200; draw += 1) {
      const subnet = drawSubnet();
      expect(subnet).toMatch(/^127\.[1-9]\.\d\.$/);
      expect(subnet).not.toBe(previous);
      expect(subnet.length).toBe(pagePrefix.length);
      for (const text of texts) expect(text.replaceAll(pagePrefix, subnet).length).toBe(text.length);
      previous = subnet;
    }
  });
});

describe('links and anchors', () => {
  it('every relative link and anchor in README.md and docs/ resolves', () => {
    const pages = markdownPages(repoRoot);
    expect(pages).toContain('docs/README.md');
    const broken = pages.flatMap((page) => brokenLinks(repoRoot, page));
    expect(broken.map((link) => `${link.page}: (${link.target}) ${link.problem}`)).toEqual([]);
  });

  it('the index lists every page under docs/', () => {
    const index = read('docs/README.md');
    const pages = markdownPages(repoRoot).filter((page) => page.startsWith('docs/') && page !== 'docs/README.md');
    expect(pages.filter((page) => !index.includes(`(${page.slice('docs/'.length)}`))).toEqual([]);
  });
});

describe('README', () => {
  it('stays under 200 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThan(200);
  });
});

/** Source files the server runs: src/ (not the browser code), backends/, fault-injection/. */
function serverSources(): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(repoRoot, dir))) {
      const path = join(dir, name);
      if (path === join('src', 'console', 'ui')) continue;
      if (statSync(join(repoRoot, path)).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) files.push(path);
    }
  };
  ['src', 'backends', 'fault-injection'].forEach(walk);
  return files;
}

const withoutComments = (code: string) => code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

/**
 * The SVC_ names the code reads. The configuration is read through an environment record
 * (`values.SVC_X`, `env.SVC_X`, `oneOf(values, 'SVC_X', ...)`, name tables such as
 * `{ standard: 'SVC_STORAGE_CLASS_STANDARD' }`), so every full SVC_ name in the code (comments
 * aside) counts. A prefix constant (`const prefix = 'SVC_IDENTITY_OPENID_'`) is joined with the
 * upper-case suffixes its file names (`'CLIENT_ID'`, `${prefix}CLAIM_NAME`).
 */
function svcVariablesRead(): Set<string> {
  const names = new Set<string>();
  for (const file of serverSources()) {
    const code = withoutComments(read(file));
    for (const match of code.matchAll(/\bSVC_[A-Z0-9_]*[A-Z0-9]\b/g)) names.add(match[0]);
    for (const prefix of code.matchAll(/const (\w+) = '(SVC_[A-Z0-9_]*_)'/g)) {
      for (const suffix of code.matchAll(/'([A-Z][A-Z0-9_]*[A-Z0-9])'/g)) if (!suffix[1]!.startsWith('SVC_')) names.add(prefix[2]! + suffix[1]!);
      for (const suffix of code.matchAll(new RegExp(`\\$\\{${prefix[1]}\\}([A-Z][A-Z0-9_]*[A-Z0-9])`, 'g'))) names.add(prefix[2]! + suffix[1]!);
    }
  }
  return names;
}

describe('configuration reference', () => {
  it('docs/configuration.md documents every SVC_ variable the server reads', () => {
    const names = svcVariablesRead();
    // The scan must find the variables read in each of the ways above.
    for (const known of ['SVC_ADDRESS', 'SVC_STORAGE_CLASS_STANDARD', 'SVC_IDENTITY_OPENID_CLAIM_VALUES', 'SVC_API_HEADERS_TIMEOUT']) expect(names).toContain(known);
    const environment = read('docs/configuration.md');
    expect([...names].sort().filter((name) => !environment.includes(`\`${name}\``))).toEqual([]);
  });
});

/** The operations the S3 router dispatches: the kinds of its endpoint union, and the subresources it answers NotImplemented. */
function routedOperations(): { operations: string[]; refused: string[] } {
  const router = read('src/api/s3/router.ts');
  const union = /export type S3Endpoint =([\s\S]*?);\n/.exec(router)![1]!;
  const operations = [...union.matchAll(/kind: '(\w+)'/g)].map((match) => match[1]!).filter((kind) => kind !== 'NotImplemented');
  const listed = [...router.matchAll(/const (?:bucket|object)Subresources = \[([^\]]*)\]/g)].flatMap((match) => [...match[1]!.matchAll(/'([\w-]+)'/g)].map((name) => name[1]!));
  // A listed subresource the router checks for by name first has an operation of its own.
  const routed = new Set([...router.matchAll(/\bhas\('([\w-]+)'\)/g)].map((match) => match[1]!));
  return { operations, refused: [...new Set(listed)].filter((name) => !routed.has(name)) };
}

describe('S3 compatibility reference', () => {
  it('docs/s3-compatibility.md has a row for every operation the router dispatches, and names every subresource it refuses', () => {
    const { operations, refused } = routedOperations();
    expect(operations.length).toBeGreaterThan(30);
    expect(refused).toContain('website');
    const rows = withoutCode(read('docs/s3-compatibility.md'))
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .map((line) => line.split('|')[1] ?? '');
    const hasRow = (operation: string) => rows.some((cell) => new RegExp(`\\b${operation}\\b`).test(cell));
    expect(operations.filter((operation) => !hasRow(operation))).toEqual([]);
    const page = read('docs/s3-compatibility.md');
    expect(refused.filter((name) => !page.includes(`?${name}`))).toEqual([]);
  });
});

/** Pages with runnable blocks, in the order a reader meets them; README.md needs the AWS CLI. */
const runnablePages = markdownPages(repoRoot).filter((page) => runnableBlocks(read(page)).length > 0);
const distMissing = existsSync(join(repoRoot, 'dist/src/cli/svc.js')) ? undefined : 'dist/ is not built (npm run build; npm install builds it)';
if (distMissing && process.env.CI) throw new Error(`CI requires ${distMissing}`);

/**
 * SVC_TEST_DOCS_RUNS=N runs each page N times in this process, each run in a new directory on a
 * newly drawn subnet (with `-t tutorial`, the tutorial alone); 1 by default.
 */
const pageRuns = Number(process.env.SVC_TEST_DOCS_RUNS ?? '1');
if (!Number.isInteger(pageRuns) || pageRuns < 1) throw new Error(`SVC_TEST_DOCS_RUNS=${process.env.SVC_TEST_DOCS_RUNS} is not a whole number of runs (1 or more)`);

describe('runnable examples', () => {
  it('the pages with runnable blocks are the README, the tutorial and the runbooks', () => {
    expect(runnablePages).toEqual(expect.arrayContaining(['README.md', 'docs/tutorial-erasure.md']));
    expect(runnablePages.some((page) => page.startsWith('docs/runbooks'))).toBe(true);
  });

  for (const page of runnablePages) {
    const needsAws = runnableBlocks(read(page)).some((block) => /^\s*aws /m.test(block.body));
    const skipReason = distMissing ?? (needsAws ? missingTool('aws', 'awscli') : undefined);
    if (skipReason) console.log(`runnable blocks of ${page} skipped: ${skipReason}`);
    for (let run = 1; run <= pageRuns; run += 1) {
      it.skipIf(skipReason !== undefined)(`${page}: every runnable block succeeds and prints what the page shows${pageRuns > 1 ? ` (run ${run} of ${pageRuns})` : ''}`, async () => {
        await runPage(page);
      }, 900_000);
    }
  }
});

let shell: DocShell | undefined;
afterAll(async () => shell?.close());

async function runPage(page: string): Promise<void> {
  shell = openDocShell();
  try {
    for (const block of runnableBlocks(read(page))) {
      const result = await shell.run(block.body, blockTimeoutMs);
      const where = `${page}:${block.line}\n--- block\n${block.body}\n--- output (exit ${result.code})\n${result.output}`;
      expect(result.code, `a command failed at ${where}`).toBe(0);
      if (block.expected !== undefined) expect(outputMatches(shell.rewrite(block.expected), result.output), `the output differs from the page at ${where}\n--- the page shows\n${block.expected}`).toBe(true);
    }
  } finally {
    await shell.close();
    shell = undefined;
  }
}

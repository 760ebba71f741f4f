/**
 * Reading the project's Markdown for the docs test: fenced blocks (runnable shell blocks and the
 * output shown after them), links, and headings turned into anchors by GitHub's slug rules.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface FencedBlock {
  info: string;
  body: string;
  /** 1-based lines of the opening and the closing fence. */
  line: number;
  endLine: number;
}

export interface RunnableBlock {
  body: string;
  line: number;
  /** The output shown after the block (a block fenced ```output), if any. */
  expected?: string;
}

const fence = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** Every fenced code block, in order; also the `<!-- runnable setup ... -->` comments (info `setup`). */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.split('\n');
  const blocks: FencedBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (line.trim() === '<!-- runnable setup') {
      const end = lines.indexOf('-->', index);
      if (end < 0) throw new Error(`line ${index + 1}: a runnable setup comment is not closed with a line '-->'`);
      blocks.push({ info: 'setup', body: lines.slice(index + 1, end).join('\n'), line: index + 1, endLine: end + 1 });
      index = end;
      continue;
    }
    const open = fence.exec(line);
    if (!open) continue;
    const marker = open[2]!;
    let end = index + 1;
    while (end < lines.length && !lines[end]!.trim().startsWith(marker)) end += 1;
    // A block inside a list item is indented with it; its lines lose that indentation.
    const indent = open[1]!.length;
    const body = lines.slice(index + 1, end).map((text) => text.replace(new RegExp(`^ {0,${indent}}`), ''));
    blocks.push({ info: open[3]!.trim(), body: body.join('\n'), line: index + 1, endLine: end + 1 });
    index = end;
  }
  return blocks;
}

/** The runnable blocks of a page (```sh runnable, and setup comments), each with the ```output block right after it. */
export function runnableBlocks(text: string): RunnableBlock[] {
  const lines = text.split('\n');
  const blocks = fencedBlocks(text);
  const runnable: RunnableBlock[] = [];
  blocks.forEach((block, index) => {
    if (block.info !== 'sh runnable' && block.info !== 'setup') return;
    const next = blocks[index + 1];
    const adjacent = next !== undefined && next.info === 'output' && lines.slice(block.endLine, next.line - 1).every((line) => line.trim() === '');
    runnable.push({ body: block.body, line: block.line, ...(adjacent ? { expected: next.body } : {}) });
  });
  return runnable;
}

/**
 * Does the output match what the page shows? Lines compare after trimming their ends; a run of
 * spaces matches any run of spaces (table columns widen with their values); `…` inside a line
 * matches any text, and a line that is only `…` matches any number of lines, none included.
 */
export function outputMatches(expected: string, actual: string): boolean {
  const want = trimLines(expected);
  const got = trimLines(actual);
  const patterns = want.map((line) => (line === '…' ? undefined : linePattern(line)));
  const memo = new Map<string, boolean>();
  const match = (w: number, g: number): boolean => {
    const key = `${w},${g}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (w === patterns.length) result = g === got.length;
    else if (patterns[w] === undefined) result = match(w + 1, g) || (g < got.length && match(w, g + 1));
    else result = g < got.length && patterns[w]!.test(got[g]!) && match(w + 1, g + 1);
    memo.set(key, result);
    return result;
  };
  return match(0, 0);
}

function trimLines(text: string): string[] {
  const lines = text.split('\n').map((line) => line.trimEnd());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  while (lines.length > 0 && lines[0] === '') lines.shift();
  return lines;
}

function linePattern(line: string): RegExp {
  const escape = (part: string) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ +/g, ' +');
  return new RegExp(`^${line.split('…').map(escape).join('.*?')}$`);
}

/** README.md and every page under docs/, as paths relative to the root. */
export function markdownPages(root: string): string[] {
  const pages = ['README.md'];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) pages.push(path);
    }
  };
  walk('docs');
  return pages;
}

/** GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces to `-`. */
export function slugOf(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors a page offers: its headings' slugs (repeats get -1, -2, ...) and explicit ids. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCode(text, { keepInlineCode: true }).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = slugOf(heading[1]!);
      const count = seen.get(slug) ?? 0;
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
      seen.set(slug, count + 1);
    }
    for (const id of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(id[1]!);
  }
  return anchors;
}

/** The text with fenced blocks and inline code blanked out (links there are not links). */
export function withoutCode(text: string, options: { keepInlineCode?: boolean } = {}): string {
  const lines = text.split('\n');
  let inFence: string | undefined;
  return lines
    .map((line) => {
      const open = fence.exec(line);
      if (inFence !== undefined) {
        if (line.trim().startsWith(inFence)) inFence = undefined;
        return '';
      }
      if (open) {
        inFence = open[2]!;
        return '';
      }
      return options.keepInlineCode ? line : line.replace(/`[^`]*`/g, '``');
    })
    .join('\n');
}

export interface BrokenLink {
  page: string;
  target: string;
  problem: string;
}

/** Every relative link of a page that leads nowhere: a missing file, or an anchor the target lacks. */
export function brokenLinks(root: string, page: string): BrokenLink[] {
  const text = readFileSync(join(root, page), 'utf8');
  const broken: BrokenLink[] = [];
  const targets = [...withoutCode(text).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  for (const ref of withoutCode(text).matchAll(/^\s*\[[^\]]+\]:\s+(\S+)/gm)) targets.push(ref[1]!);
  for (const target of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
    const file = pathPart === '' ? join(root, page) : resolve(dirname(join(root, page)), decodeURIComponent(pathPart));
    if (relative(root, file).startsWith('..')) {
      broken.push({ page, target, problem: 'leaves the repository' });
      continue;
    }
    if (!existsSync(file)) {
      broken.push({ page, target, problem: 'no such file' });
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (!file.endsWith('.md')) {
      broken.push({ page, target, problem: 'an anchor into a file that is not Markdown' });
      continue;
    }
    if (!anchorsOf(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor))) broken.push({ page, target, problem: `no heading with the anchor #${anchor}` });
  }
  return broken;
}

/**
 * Ellipsis expansion of endpoint patterns: every `{a...b}` range expands to each of its values,
 * several ranges combine as a cartesian product with the leftmost range varying slowest.
 * Numeric ranges keep zero padding (`{01...16}`); alphabetic ranges take single letters
 * (`{a...d}`).
 */
import { SvcError } from '../errors/index.js';

const rangePattern = /\{([^{}]*)\}/g;

export function hasEllipsis(pattern: string): boolean {
  return /\{[^{}]*\.\.\.[^{}]*\}/.test(pattern);
}

export function expandEllipsis(pattern: string): string[] {
  if (pattern === '') throw invalid(pattern, 'the pattern is empty');
  const literals: string[] = [];
  const ranges: string[][] = [];
  let last = 0;
  for (const match of pattern.matchAll(rangePattern)) {
    literals.push(pattern.slice(last, match.index));
    ranges.push(expandRange(pattern, match[1]!));
    last = match.index + match[0].length;
  }
  literals.push(pattern.slice(last));
  if (literals.some((literal) => literal.includes('{') || literal.includes('}'))) throw invalid(pattern, 'unbalanced braces');
  let results = [literals[0]!];
  ranges.forEach((values, index) => {
    const next: string[] = [];
    for (const prefix of results) for (const value of values) next.push(prefix + value + literals[index + 1]!);
    results = next;
  });
  return results;
}

function expandRange(pattern: string, body: string): string[] {
  const parts = body.split('...');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') throw invalid(pattern, `'{${body}}' is not a range of the form {a...b}`);
  const [from, to] = parts as [string, string];
  if (/^\d+$/.test(from) && /^\d+$/.test(to)) return numericRange(pattern, from, to);
  if (/^[a-z]$/.test(from) && /^[a-z]$/.test(to)) return letterRange(pattern, from, to);
  if (/^[A-Z]$/.test(from) && /^[A-Z]$/.test(to)) return letterRange(pattern, from, to);
  throw invalid(pattern, `'{${body}}' mixes or misuses bounds (use numbers like {1...4} or single letters like {a...d})`);
}

function numericRange(pattern: string, from: string, to: string): string[] {
  const start = Number(from);
  const end = Number(to);
  if (end < start) throw invalid(pattern, `range {${from}...${to}} runs backwards`);
  if (end - start > 10_000) throw invalid(pattern, `range {${from}...${to}} is too large`);
  const padded = (from.length > 1 && from.startsWith('0')) || (to.length > 1 && to.startsWith('0'));
  const width = padded ? Math.max(from.length, to.length) : 0;
  return Array.from({ length: end - start + 1 }, (_, index) => String(start + index).padStart(width, '0'));
}

function letterRange(pattern: string, from: string, to: string): string[] {
  const start = from.charCodeAt(0);
  const end = to.charCodeAt(0);
  if (end < start) throw invalid(pattern, `range {${from}...${to}} runs backwards`);
  return Array.from({ length: end - start + 1 }, (_, index) => String.fromCharCode(start + index));
}

function invalid(pattern: string, problem: string): SvcError {
  return new SvcError('InvalidLayout', `invalid endpoint pattern '${pattern}': ${problem}`, { rule: 'ellipsis-syntax', pattern });
}

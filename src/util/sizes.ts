import { SvcError } from '../errors/index.js';

const units: Record<string, number> = {
  '': 1, b: 1,
  k: 1000, kb: 1000, kib: 1024, ki: 1024,
  m: 1000 ** 2, mb: 1000 ** 2, mib: 1024 ** 2, mi: 1024 ** 2,
  g: 1000 ** 3, gb: 1000 ** 3, gib: 1024 ** 3, gi: 1024 ** 3,
  t: 1000 ** 4, tb: 1000 ** 4, tib: 1024 ** 4, ti: 1024 ** 4,
};

/**
 * Parses byte-size syntax such as `128KiB`, `1MB`, `4096`, `1.5GiB` (units are case-insensitive;
 * KB = 1000, KiB = 1024). Throws InvalidConfiguration naming the value otherwise.
 */
export function parseByteSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const multiplier = match ? units[match[2]!.toLowerCase()] : undefined;
  if (!match || multiplier === undefined) {
    throw new SvcError('InvalidConfiguration', `invalid byte size '${text}' (expected a number with an optional unit such as 128KiB or 1MB)`);
  }
  const bytes = Number(match[1]) * multiplier;
  if (!Number.isSafeInteger(Math.round(bytes))) {
    throw new SvcError('InvalidConfiguration', `byte size '${text}' is too large`);
  }
  return Math.round(bytes);
}

/** Formats bytes for people: 1536 -> "1.5 KiB". */
export function formatBytes(bytes: number): string {
  const names = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let index = 0;
  while (Math.abs(value) >= 1024 && index < names.length - 1) {
    value /= 1024;
    index += 1;
  }
  return index === 0 ? `${value} B` : `${value.toFixed(value >= 100 ? 0 : 1)} ${names[index]}`;
}

/**
 * Condition operand formats, shared by the policy parser (which refuses an operand it cannot
 * read) and the evaluator (which reads the request's values the same way).
 */
import { BlockList, isIP } from 'node:net';

/** A decimal number (`10`, `-2.5`, `.5`); undefined otherwise. */
export function parseNumber(text: string): number | undefined {
  return /^[+-]?(\d+(\.\d+)?|\.\d+)$/.test(text) ? Number(text) : undefined;
}

const isoDate = /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * An instant in milliseconds: ISO 8601 (`2030-01-31`, taken as UTC midnight, or a date and time
 * with `Z` or an offset) or whole epoch seconds (`1900000000`); undefined otherwise.
 */
export function parseDateMs(text: string): number | undefined {
  if (/^\d{1,12}$/.test(text)) return Number(text) * 1000;
  const match = isoDate.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** `true` or `false` in any letter case; undefined otherwise. */
export function parseBool(text: string): boolean | undefined {
  const lower = text.toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : undefined;
}

/** An IPv4 or IPv6 address, or a CIDR block of one. */
export function isCidr(cidr: string): boolean {
  const [address, bits, extra] = cidr.split('/');
  const family = isIP(address ?? '');
  const maxBits = family === 4 ? 32 : 128;
  const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
  return family !== 0 && extra === undefined && bitsOk;
}

/** Client addresses arrive as IPv4-mapped IPv6 on dual-stack sockets: judge them as IPv4. */
export function normaliseIp(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** Whether an address lies in one of the blocks (checked with isCidr); false for what is not an address. */
export function ipInAny(cidrs: readonly string[], address: string): boolean {
  const ip = normaliseIp(address);
  const family = isIP(ip);
  if (family === 0) return false;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [base, bits] = cidr.split('/');
    const type = isIP(base!) === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(base!, type);
    else list.addSubnet(base!, Number(bits), type);
  }
  return list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

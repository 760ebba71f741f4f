/**
 * Bucket CORS: the configuration's XML, and how a browser request is judged against its rules
 * (the first rule allowing the origin, the method and every requested header wins). Preflights
 * (OPTIONS) are answered without a signature, as browsers send them; an actual request with an
 * Origin gets the allow/expose headers on its answer, errors included, so a page can read them.
 */
import { SvcError } from '../../errors/index.js';
import type { CorsRule } from '../../object/index.js';
import { limits } from '../../util/limits.js';
import { parseXmlBody, toXml } from './xml.js';

const corsMethods = ['GET', 'PUT', 'HEAD', 'POST', 'DELETE'];

export function parseCorsConfiguration(body: Uint8Array): CorsRule[] {
  const parsed = parseXmlBody(body, ['CORSRule', 'AllowedOrigin', 'AllowedMethod', 'AllowedHeader', 'ExposeHeader']);
  const rules = (parsed.CORSConfiguration as Record<string, unknown> | undefined)?.CORSRule as Record<string, unknown>[] | undefined;
  if (!Array.isArray(rules) || rules.length === 0) throw new SvcError('MalformedXML', 'A CORSConfiguration needs at least one CORSRule.');
  if (rules.length > limits.maxCorsRules) throw new SvcError('InvalidRequest', `A CORS configuration may hold ${limits.maxCorsRules} rules at most.`);
  return rules.map(parseRule);
}

function parseRule(rule: Record<string, unknown>): CorsRule {
  const list = (name: string): string[] => ((rule[name] as unknown[] | undefined) ?? []).map((item) => String(item).trim());
  const allowedOrigins = list('AllowedOrigin');
  const allowedMethods = list('AllowedMethod');
  if (allowedOrigins.length === 0 || allowedMethods.length === 0) throw new SvcError('MalformedXML', 'Every CORSRule needs an AllowedOrigin and an AllowedMethod.');
  const unsupported = allowedMethods.find((method) => !corsMethods.includes(method));
  if (unsupported !== undefined) throw new SvcError('InvalidRequest', `Found unsupported HTTP method in CORS config. Unsupported method is ${unsupported}`);
  const allowedHeaders = list('AllowedHeader');
  for (const pattern of [...allowedOrigins, ...allowedHeaders]) {
    if (pattern.split('*').length > 2) throw new SvcError('InvalidRequest', `'${pattern}' may contain at most one wildcard.`);
  }
  const maxAge = rule.MaxAgeSeconds === undefined ? undefined : Number(rule.MaxAgeSeconds);
  if (maxAge !== undefined && !(Number.isSafeInteger(maxAge) && maxAge >= 0)) throw new SvcError('MalformedXML', 'MaxAgeSeconds must be a whole number of seconds.');
  return {
    ...(typeof rule.ID === 'string' ? { id: rule.ID } : {}),
    allowedOrigins, allowedMethods, allowedHeaders, exposeHeaders: list('ExposeHeader'),
    ...(maxAge !== undefined ? { maxAgeSeconds: maxAge } : {}),
  };
}

export function corsConfigurationXml(rules: CorsRule[]): string {
  return toXml('CORSConfiguration', {
    CORSRule: rules.map((rule) => ({
      ...(rule.id !== undefined ? { ID: rule.id } : {}),
      AllowedHeader: rule.allowedHeaders, AllowedMethod: rule.allowedMethods, AllowedOrigin: rule.allowedOrigins, ExposeHeader: rule.exposeHeaders,
      ...(rule.maxAgeSeconds !== undefined ? { MaxAgeSeconds: rule.maxAgeSeconds } : {}),
    })),
  });
}

function wildcardMatch(pattern: string, value: string, ignoreCase: boolean): boolean {
  const [head, tail] = pattern.split('*') as [string, string | undefined];
  const [p, v, h] = ignoreCase ? [pattern.toLowerCase(), value.toLowerCase(), head.toLowerCase()] : [pattern, value, head];
  if (tail === undefined) return p === v;
  const t = ignoreCase ? tail.toLowerCase() : tail;
  return v.length >= h.length + t.length && v.startsWith(h) && v.endsWith(t);
}

export interface CorsAsk {
  origin: string;
  method: string;
  /** Headers a preflight asks to send (Access-Control-Request-Headers); none for actual requests. */
  headers: string[];
}

/** The first rule allowing the origin, method and every requested header. */
export function matchingRule(rules: CorsRule[] | undefined, ask: CorsAsk): CorsRule | undefined {
  return rules?.find(
    (rule) =>
      rule.allowedOrigins.some((pattern) => wildcardMatch(pattern, ask.origin, false)) &&
      rule.allowedMethods.includes(ask.method) &&
      ask.headers.every((name) => rule.allowedHeaders.some((pattern) => wildcardMatch(pattern, name, true))),
  );
}

/** The headers of an allowed preflight's answer. */
export function preflightHeaders(rule: CorsRule, ask: CorsAsk): Record<string, string | number> {
  return {
    ...actualHeaders(rule, ask.origin),
    'access-control-allow-methods': rule.allowedMethods.join(', '),
    ...(ask.headers.length > 0 ? { 'access-control-allow-headers': ask.headers.join(', ') } : {}),
    ...(rule.maxAgeSeconds !== undefined ? { 'access-control-max-age': rule.maxAgeSeconds } : {}),
  };
}

/** The headers an actual request from an allowed origin gets on its answer. */
export function actualHeaders(rule: CorsRule, origin: string): Record<string, string> {
  const anyOrigin = rule.allowedOrigins.includes('*');
  return {
    'access-control-allow-origin': anyOrigin ? '*' : origin,
    vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
    ...(anyOrigin ? {} : { 'access-control-allow-credentials': 'true' }),
    ...(rule.exposeHeaders.length > 0 ? { 'access-control-expose-headers': rule.exposeHeaders.join(', ') } : {}),
  };
}

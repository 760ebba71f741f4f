/**
 * Policy variables in a Resource and in string condition values: `${aws:username}`,
 * `${aws:userid}`, `${aws:PrincipalType}`, `${aws:SourceIp}`, `${jwt:<claim>}`, and the escapes
 * `${*}`, `${?}`, `${$}` for a literal `*`, `?` and `$`. Text is compiled once, when the policy is
 * parsed, into parts; a request resolves the parts. A variable whose key the request lacks (or
 * holds several values for) resolves to nothing, so the resource or value that holds it matches
 * no request. Policies of Version 2008-10-17 have no variables: their text is taken as written.
 */
import { canonicalVariableKey } from './condition-keys.js';
import { anyOne, anyRun, literalUnits, type GlobUnit } from './match.js';

export type TemplatePart =
  | { kind: 'text'; text: string }
  | { kind: 'escape'; char: '*' | '?' | '$' }
  | { kind: 'variable'; key: string };

export type Template = readonly TemplatePart[];

export type ContextValue = string | readonly string[] | undefined;
export type RequestContext = Readonly<Record<string, ContextValue>>;

/** The parts of a text; `unknown` gets the names of `${...}` that are no policy variable. Throws (a message) on an unclosed `${`. */
export function parseTemplate(text: string, variables: boolean, unknown: (name: string) => void): Template {
  if (!variables || !text.includes('${')) return [{ kind: 'text', text }];
  const parts: TemplatePart[] = [];
  let at = 0;
  for (let open = text.indexOf('${'); open >= 0; open = text.indexOf('${', at)) {
    if (open > at) parts.push({ kind: 'text', text: text.slice(at, open) });
    const close = text.indexOf('}', open);
    if (close < 0) throw new Error(`${JSON.stringify(text)} has a \${ without its closing }`);
    parts.push(variablePart(text.slice(open + 2, close), unknown));
    at = close + 1;
  }
  if (at < text.length) parts.push({ kind: 'text', text: text.slice(at) });
  return parts;
}

function variablePart(name: string, unknown: (name: string) => void): TemplatePart {
  if (name === '*' || name === '?' || name === '$') return { kind: 'escape', char: name };
  const key = canonicalVariableKey(name);
  if (key === undefined) {
    unknown(`\${${name}}`);
    return { kind: 'text', text: '' };
  }
  return { kind: 'variable', key };
}

function variableValue(context: RequestContext, key: string): string | undefined {
  const value = context[key];
  return typeof value === 'string' ? value : value?.length === 1 ? value[0] : undefined;
}

/** The template as plain text (no wildcards); undefined when a variable has no value. */
export function resolveText(template: Template, context: RequestContext): string | undefined {
  let text = '';
  for (const part of template) {
    const piece = part.kind === 'text' ? part.text : part.kind === 'escape' ? part.char : variableValue(context, part.key);
    if (piece === undefined) return undefined;
    text += piece;
  }
  return text;
}

/** The template as a wildcard pattern: `*` and `?` of its own text are wildcards, those of escapes and variable values are not. */
export function resolveUnits(template: Template, context: RequestContext): GlobUnit[] | undefined {
  const units: GlobUnit[] = [];
  for (const part of template) {
    if (part.kind === 'escape') {
      units.push(part.char);
    } else if (part.kind === 'text') {
      for (const char of part.text.split('')) units.push(char === '*' ? anyRun : char === '?' ? anyOne : char);
    } else {
      const value = variableValue(context, part.key);
      if (value === undefined) return undefined;
      units.push(...literalUnits(value));
    }
  }
  return units;
}

/**
 * A reference policy evaluator for property tests, written from the rules as AWS states them and
 * deliberately plain: wildcards become anchored regular expressions, conditions are loops over
 * the policy's raw JSON. It shares no code with src/iam (the production evaluator), so the two
 * disagreeing points at a bug in one of them. It judges valid documents only (the property test
 * makes them); it does not validate.
 */
export type ReferenceDecision = 'Allow' | 'Deny' | 'NoMatch';
export type ReferenceContext = Record<string, string | string[] | undefined>;

export interface ReferenceRequest {
  action: string;
  resource: string;
  principal?: string;
  context: ReferenceContext;
}

export interface ReferenceDocument {
  Version: string;
  Statement: Array<Record<string, unknown>>;
}

export function referenceDecision(documents: ReferenceDocument[], request: ReferenceRequest): ReferenceDecision {
  let allow = false;
  let deny = false;
  for (const document of documents) {
    for (const statement of document.Statement) {
      if (!statementMatches(statement, request, document.Version === '2012-10-17')) continue;
      if (statement.Effect === 'Deny') deny = true;
      else allow = true;
    }
  }
  return deny ? 'Deny' : allow ? 'Allow' : 'NoMatch';
}

const asList = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** `*` any run, `?` one character, everything else literal. */
export function globToRegExpSource(pattern: string): string {
  let source = '';
  for (const char of pattern) source += char === '*' ? '[\\s\\S]*' : char === '?' ? '[\\s\\S]' : escapeRegExp(char);
  return source;
}

function lookup(context: ReferenceContext, key: string): string[] {
  const colon = key.indexOf('/') > 0 ? key.indexOf('/') + 1 : key.toLowerCase().startsWith('jwt:') ? 4 : key.length;
  const head = key.slice(0, colon).toLowerCase();
  const tail = key.slice(colon);
  for (const [name, value] of Object.entries(context)) {
    if (name.slice(0, colon).toLowerCase() === head && name.slice(colon) === tail && name.length === key.length) {
      return value === undefined ? [] : Array.isArray(value) ? value : [value];
    }
  }
  return [];
}

/**
 * A pattern or value with `${...}` replaced, as a regular expression source (wildcards on when
 * `glob`) or plain text; null when a variable has no single value in the request.
 */
function substitute(text: string, context: ReferenceContext, variables: boolean, glob: boolean): string | null {
  const literal = glob ? escapeRegExp : (piece: string) => piece;
  const own = glob ? globToRegExpSource : (piece: string) => piece;
  if (!variables) return own(text);
  let out = '';
  let rest = text;
  for (let match = /\$\{([^}]*)\}/.exec(rest); match; match = /\$\{([^}]*)\}/.exec(rest)) {
    out += own(rest.slice(0, match.index));
    const name = match[1]!;
    if (name === '*' || name === '?' || name === '$') {
      out += literal(name);
    } else {
      const values = lookup(context, name);
      if (values.length !== 1) return null;
      out += literal(values[0]!);
    }
    rest = rest.slice(match.index + match[0].length);
  }
  return out + own(rest);
}

function statementMatches(statement: Record<string, unknown>, request: ReferenceRequest, variables: boolean): boolean {
  const principals = statement.Principal === undefined ? undefined : statement.Principal === '*' ? ['*'] : asList((statement.Principal as { AWS: unknown }).AWS);
  if (principals && !principals.some((p) => p === '*' || (request.principal !== undefined && (p === request.principal || String(p).endsWith(`:user/${request.principal}`))))) return false;
  const actionHit = (patterns: unknown[]) => patterns.some((p) => new RegExp(`^${globToRegExpSource(String(p))}$`, 'i').test(request.action));
  if (statement.Action !== undefined ? !actionHit(asList(statement.Action)) : actionHit(asList(statement.NotAction))) return false;
  const resourceHit = asList(statement.Resource).some((pattern) => {
    const source = substitute(String(pattern), request.context, variables, true);
    return source !== null && new RegExp(`^${source}$`).test(request.resource);
  });
  if (!resourceHit) return false;
  for (const [operatorName, block] of Object.entries((statement.Condition ?? {}) as Record<string, Record<string, unknown>>)) {
    for (const [key, values] of Object.entries(block)) {
      if (!referenceCondition(operatorName, lookup(request.context, key), asList(values).map(String), request.context, variables)) return false;
    }
  }
  return true;
}

const negatedNames = ['StringNotEquals', 'StringNotEqualsIgnoreCase', 'StringNotLike', 'NumericNotEquals', 'DateNotEquals', 'NotIpAddress'];

/** One operator and key against the request's values. */
export function referenceCondition(operatorName: string, present: string[], policyValues: string[], context: ReferenceContext, variables: boolean): boolean {
  let name = operatorName;
  let qualifier = '';
  if (name.startsWith('ForAnyValue:') || name.startsWith('ForAllValues:')) [qualifier, name] = [name.slice(0, name.indexOf(':')), name.slice(name.indexOf(':') + 1)];
  const ifExists = name.endsWith('IfExists');
  if (ifExists) name = name.slice(0, -8);
  if (present.length === 0 && ifExists) return true;
  if (name === 'Null') return policyValues.some((value) => (value.toLowerCase() === 'true') === (present.length === 0));
  const negated = negatedNames.includes(name);
  if (present.length === 0) {
    if (qualifier === 'ForAllValues') return true;
    if (qualifier === 'ForAnyValue') return false;
    return negated;
  }
  const matchOne = (value: string) => policyValues.some((policyValue) => positiveTest(name, value, policyValue, context, variables));
  if (qualifier === 'ForAllValues') return present.every((value) => matchOne(value) !== negated);
  if (qualifier === 'ForAnyValue') return present.some((value) => matchOne(value) !== negated);
  return negated ? !present.some(matchOne) : present.some(matchOne);
}

function positiveTest(name: string, value: string, policyValue: string, context: ReferenceContext, variables: boolean): boolean {
  if (name.startsWith('String')) {
    const like = name.endsWith('Like');
    const resolved = substitute(policyValue, context, variables, like);
    if (resolved === null) return false;
    if (like) return new RegExp(`^${resolved}$`).test(value);
    return name.includes('IgnoreCase') ? resolved.toLowerCase() === value.toLowerCase() : resolved === value;
  }
  if (name.startsWith('Numeric')) return compareWith(name.slice(7), readNumber(value), readNumber(policyValue));
  if (name.startsWith('Date')) return compareWith(name.slice(4), readDate(value), readDate(policyValue));
  if (name === 'Bool') return ['true', 'false'].includes(value.toLowerCase()) && value.toLowerCase() === policyValue.toLowerCase();
  if (name.endsWith('IpAddress')) return ipv4InCidr(value, policyValue);
  throw new Error(`the reference does not know ${name}`);
}

function readNumber(text: string): number {
  return /^[+-]?(\d+(\.\d+)?|\.\d+)$/.test(text) ? Number(text) : NaN;
}

function readDate(text: string): number {
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  return /^\d{4}-\d\d-\d\d(T[\d:.]+(Z|[+-]\d\d:\d\d))?$/.test(text) ? Date.parse(text) : NaN;
}

function compareWith(comparison: string, value: number, bound: number): boolean {
  if (Number.isNaN(value) || Number.isNaN(bound)) return false;
  const table: Record<string, boolean> = {
    Equals: value === bound, NotEquals: value === bound, LessThan: value < bound, LessThanEquals: value <= bound,
    GreaterThan: value > bound, GreaterThanEquals: value >= bound,
  };
  return table[comparison]!;
}

function ipv4ToNumber(ip: string): number {
  const parts = ip.replace(/^::ffff:/, '').split('.');
  if (parts.length !== 4 || parts.some((part) => !/^\d{1,3}$/.test(part) || Number(part) > 255)) return NaN;
  return parts.reduce((sum, part) => sum * 256 + Number(part), 0);
}

/** IPv4 only: the property test makes IPv4 addresses and blocks. */
function ipv4InCidr(ip: string, cidr: string): boolean {
  const [base, bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const address = ipv4ToNumber(ip);
  return !Number.isNaN(address) && Math.floor(address / size) === Math.floor(ipv4ToNumber(base!) / size);
}

/**
 * How one condition is judged against a request, as AWS documents condition operators:
 *
 * - A key is absent when the request has no value for it (undefined, or an empty list).
 * - An absent key makes a plain operator false, except the negated ones (StringNotEquals,
 *   StringNotEqualsIgnoreCase, StringNotLike, NumericNotEquals, DateNotEquals, NotIpAddress),
 *   which hold. `...IfExists` holds whenever the key is absent, and otherwise is its operator.
 * - `Null` checks presence alone: `true` holds when the key is absent, `false` when it is present.
 * - Several values in the policy are alternatives: a positive operator holds when the request's
 *   value matches one of them, a negated operator when it matches none.
 * - A multi-valued key (`s3:RequestObjectTagKeys`): `ForAnyValue:` holds when some request value
 *   passes the operator (false when the key is absent), `ForAllValues:` when every request value
 *   does (true when the key is absent or empty). A negated operator under a qualifier is judged
 *   value by value (`ForAllValues:StringNotLike`: no request value matches any pattern). Without a
 *   qualifier a positive operator holds when any of the values matches, a negated one when none does.
 * - `ArnEquals` and `ArnLike` (and their negations) compare an ARN with `*` and `?` wildcards.
 * - String operators compare exactly (`...IgnoreCase`: after lower-casing both sides); `StringLike`
 *   takes `*` and `?` wildcards. Policy variables are resolved in string values only; a value
 *   whose variable the request lacks matches nothing.
 * - Numeric and Date operators read the request's value as a number or an instant (ISO 8601 or
 *   epoch seconds); a value that does not read matches nothing. `Bool` compares `true`/`false` in
 *   any letter case. `IpAddress` takes addresses and CIDR blocks, IPv4-mapped IPv6 read as IPv4.
 */
import { negatedOperators, type ConditionOperator } from './condition-keys.js';
import { unitsMatch } from './match.js';
import { ipInAny, parseBool, parseDateMs, parseNumber } from './operands.js';
import { resolveText, resolveUnits, type RequestContext } from './variables.js';
import type { Condition } from './policy.js';

export function conditionHolds(condition: Condition, context: RequestContext): boolean {
  const raw = context[condition.key];
  const present: readonly string[] = raw === undefined ? [] : typeof raw === 'string' ? [raw] : raw;
  if (present.length === 0 && condition.ifExists) return true;
  if (condition.operator === 'Null') return condition.values.some((value) => parseBool(value) === (present.length === 0));
  const negated = negatedOperators.has(condition.operator);
  if (present.length === 0) return condition.qualifier === 'ForAllValues' || (condition.qualifier === undefined && negated);
  const matches = operandMatcher(condition, context);
  const passes = (value: string): boolean => matches(value) !== negated;
  if (condition.qualifier === 'ForAllValues') return present.every(passes);
  if (condition.qualifier === 'ForAnyValue') return present.some(passes);
  return present.some(matches) !== negated;
}

type Matcher = (value: string) => boolean;

/** Whether one request value matches one of the condition's values, by the operator's positive form. */
function operandMatcher(condition: Condition, context: RequestContext): Matcher {
  const family = positiveForm(condition.operator);
  switch (family) {
    case 'StringEquals':
    case 'StringEqualsIgnoreCase': {
      const fold = family === 'StringEqualsIgnoreCase' ? (text: string) => text.toLowerCase() : (text: string) => text;
      const wanted = new Set(condition.templates.map((template) => resolveText(template, context)).filter((text) => text !== undefined).map(fold));
      return (value) => wanted.has(fold(value));
    }
    case 'ArnEquals':
    case 'ArnLike':
    case 'StringLike': {
      // AWS judges ArnEquals and ArnLike alike: the ARN with * and ? wildcards, as StringLike compares text.
      const patterns = condition.templates.map((template) => resolveUnits(template, context)).filter((units) => units !== undefined);
      return (value) => patterns.some((units) => unitsMatch(units, value, false));
    }
    case 'Bool':
      return (value) => condition.values.some((operand) => parseBool(operand) === parseBool(value) && parseBool(value) !== undefined);
    case 'IpAddress':
      return (value) => ipInAny(condition.values, value);
    default:
      return comparisonMatcher(family, condition.values);
  }
}

type Comparison = 'Equals' | 'LessThan' | 'LessThanEquals' | 'GreaterThan' | 'GreaterThanEquals';

function comparisonMatcher(family: string, operands: readonly string[]): Matcher {
  const read = family.startsWith('Numeric') ? parseNumber : parseDateMs;
  const comparison = family.replace(/^(Numeric|Date)/, '') as Comparison;
  const bounds = operands.map(read).filter((bound) => bound !== undefined);
  return (value) => {
    const number = read(value);
    return number !== undefined && bounds.some((bound) => compare(number, comparison, bound));
  };
}

function compare(value: number, comparison: Comparison, bound: number): boolean {
  switch (comparison) {
    case 'Equals': return value === bound;
    case 'LessThan': return value < bound;
    case 'LessThanEquals': return value <= bound;
    case 'GreaterThan': return value > bound;
    case 'GreaterThanEquals': return value >= bound;
  }
}

/** The operator a negated one is the complement of (StringNotLike: StringLike). */
function positiveForm(operator: ConditionOperator): string {
  if (operator === 'NotIpAddress') return 'IpAddress';
  return negatedOperators.has(operator) ? operator.replace('Not', '') : operator;
}

/**
 * Wildcard matching for actions, resources and `StringLike` values: `*` matches any run of
 * characters (slashes included), `?` exactly one. A pattern whose parts came from a policy
 * variable or an escape (`${*}`) is a list of units, so a `*` that came from a user name or an
 * escape stays a literal character.
 */

/** One unit of a compiled pattern: a literal character, or a wildcard. */
export type GlobUnit = string | typeof anyRun | typeof anyOne;
export const anyRun = 0;
export const anyOne = 1;

/** The units of a plain pattern string, where every `*` and `?` is a wildcard (code unit by code unit, as `?` counts them). */
export function globUnits(pattern: string): GlobUnit[] {
  return pattern.split('').map((char) => (char === '*' ? anyRun : char === '?' ? anyOne : char));
}

/** The units of literal text. */
export function literalUnits(text: string): string[] {
  return text.split('');
}

export function wildcardMatch(pattern: string, text: string, ignoreCase: boolean): boolean {
  return unitsMatch(globUnits(pattern), text, ignoreCase);
}

/** Iterative glob with one backtrack point: linear in practice, no regular expression built from input. */
export function unitsMatch(units: readonly GlobUnit[], text: string, ignoreCase: boolean): boolean {
  const t = ignoreCase ? text.toLowerCase() : text;
  const same = (unit: GlobUnit, char: string): boolean => unit === anyOne || (typeof unit === 'string' && (ignoreCase ? unit.toLowerCase() : unit) === char);
  let pi = 0;
  let ti = 0;
  let starAt = -1;
  let resumeAt = 0;
  while (ti < t.length) {
    if (pi < units.length && same(units[pi]!, t[ti]!)) {
      pi++;
      ti++;
    } else if (pi < units.length && units[pi] === anyRun) {
      starAt = pi++;
      resumeAt = ti;
    } else if (starAt >= 0) {
      pi = starAt + 1;
      ti = ++resumeAt;
    } else {
      return false;
    }
  }
  while (pi < units.length && units[pi] === anyRun) pi++;
  return pi === units.length;
}

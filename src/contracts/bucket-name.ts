/**
 * S3's bucket naming rule, written once for the S3 router, the console's server and the console's
 * browser code (which shows the broken rule as the name is typed). Imports nothing.
 */

/** The first naming rule the name breaks, in words ("Bucket names ..."), or undefined when it is a valid name. */
export function bucketNameProblem(name: string): string | undefined {
  const rule = brokenRule(name);
  return rule === undefined ? undefined : `Bucket names ${rule}.`;
}

function brokenRule(name: string): string | undefined {
  if (name.length < 3 || name.length > 63) return 'are 3 to 63 characters long';
  if (!/^[a-z0-9.-]+$/.test(name)) return 'use only lowercase letters, digits, dots and hyphens';
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) return 'begin and end with a letter or digit';
  if (name.includes('..')) return 'have no two dots in a row';
  if (name.includes('.-') || name.includes('-.')) return 'have no dot next to a hyphen';
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) return 'are not formatted as an IP address';
  if (name.startsWith('xn--') || name.endsWith('-s3alias')) return "do not begin with 'xn--' or end with '-s3alias'";
  return undefined;
}

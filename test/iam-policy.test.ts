/**
 * The policy evaluator (src/iam) against a small reference evaluator written here from the
 * rules as AWS states them, on random policies, requests and resources. IAM_POLICY_SEED replays
 * a failure (fast-check prints the seed); IAM_POLICY_RUNS raises the number of runs.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { builtInPolicies, evaluatePolicies, isAllowed, parsePolicy, validatePolicy, wildcardMatch, type AccessRequest, type Policy } from '../src/iam/index.js';
import { isSvcError } from '../src/errors/index.js';

const runs = Number(process.env.IAM_POLICY_RUNS ?? 300);
const seed = process.env.IAM_POLICY_SEED === undefined ? undefined : Number(process.env.IAM_POLICY_SEED);
const options = { numRuns: runs, ...(seed === undefined ? {} : { seed }) };

// ---- the reference: regular expressions and set logic, no shared code with src/iam ----
function globToRegExp(pattern: string, flags: string): RegExp {
  const body = [...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/-]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, `s${flags}`);
}
function ipv4ToNumber(ip: string): number {
  return ip.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
}
function inCidr(cidr: string, ip: string): boolean {
  const [base, bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4ToNumber(ip) / size) === Math.floor(ipv4ToNumber(base!) / size);
}
type Doc = { Version: string; Statement: Array<Record<string, unknown>> };
function referenceMatches(statement: Record<string, unknown>, request: AccessRequest): boolean {
  const list = (value: unknown): string[] => (value === undefined ? [] : typeof value === 'string' ? [value] : (value as string[]));
  const actionHit = (patterns: string[]) => patterns.some((p) => globToRegExp(p, 'i').test(request.action));
  const actionOk = statement.Action !== undefined ? actionHit(list(statement.Action)) : !actionHit(list(statement.NotAction));
  const resourceOk = list(statement.Resource).some((p) => globToRegExp(p, '').test(request.resource));
  const conditions = (statement.Condition ?? {}) as Record<string, Record<string, string[]>>;
  const conditionOk = Object.entries(conditions).every(([operator, block]) => Object.entries(block).every(([key, values]) => {
    const value = request.context[key];
    const negated = operator.startsWith('StringNot') || operator === 'NotIpAddress';
    if (value === undefined) return negated;
    const hit = operator.includes('Ip') ? values.some((v) => inCidr(v, value))
      : operator.includes('Like') ? values.some((v) => globToRegExp(v, '').test(value))
        : values.includes(value);
    return negated ? !hit : hit;
  }));
  return actionOk && resourceOk && conditionOk;
}
function referenceDecision(documents: Doc[], request: AccessRequest): 'Allow' | 'Deny' | 'NoMatch' {
  const matching = documents.flatMap((d) => d.Statement).filter((s) => referenceMatches(s, request));
  if (matching.some((s) => s.Effect === 'Deny')) return 'Deny';
  return matching.some((s) => s.Effect === 'Allow') ? 'Allow' : 'NoMatch';
}

// ---- generators over a small alphabet, so patterns and requests meet often ----
const actionNames = ['GetObject', 'PutObject', 'DeleteObject', 'ListBucket', 'GetBucketPolicy'];
const actionPattern = fc.oneof(fc.constant('*'), fc.constant('s3:*'), fc.constantFrom(...actionNames).map((a) => `s3:${a}`), fc.constantFrom('s3:Get*', 's3:*Object', 's3:?utObject', 's3:getobject'));
const segment = fc.stringMatching(/^[ab*?/]{0,4}$/);
const resourcePattern = fc.oneof(fc.constant('arn:aws:s3:::*'), fc.tuple(fc.constantFrom('b1', 'b2', 'b*'), segment).map(([b, k]) => `arn:aws:s3:::${b}${k === '' ? '' : `/${k}`}`));
const cidr = fc.constantFrom('127.0.0.0/8', '10.1.0.0/16', '10.1.2.3', '192.168.0.0/24', '0.0.0.0/0');
const condition = fc.oneof(
  fc.record({ op: fc.constantFrom('StringEquals', 'StringNotEquals', 'StringLike', 'StringNotLike'), key: fc.constant('s3:prefix'), values: fc.array(segment.filter((s) => s !== ''), { minLength: 1, maxLength: 2 }) }),
  fc.record({ op: fc.constantFrom('IpAddress', 'NotIpAddress'), key: fc.constant('aws:SourceIp'), values: fc.array(cidr, { minLength: 1, maxLength: 2 }) }),
);
const statement = fc.record({
  effect: fc.constantFrom('Allow', 'Deny'),
  negate: fc.boolean(),
  actions: fc.array(actionPattern, { minLength: 1, maxLength: 3 }),
  resources: fc.array(resourcePattern, { minLength: 1, maxLength: 2 }),
  conditions: fc.array(condition, { maxLength: 2 }),
}).map(({ effect, negate, actions, resources, conditions }) => {
  const result: Record<string, unknown> = { Effect: effect, [negate ? 'NotAction' : 'Action']: actions, Resource: resources };
  const block: Record<string, Record<string, string[]>> = {};
  for (const c of conditions) (block[c.op] ??= {})[c.key] = c.values;
  if (conditions.length > 0) result.Condition = block;
  return result;
});
const documentArb = fc.array(statement, { minLength: 1, maxLength: 4 }).map((s): Doc => ({ Version: '2012-10-17', Statement: s }));
const requestArb = fc.record({
  action: fc.constantFrom(...actionNames).map((a) => `s3:${a}`),
  resource: fc.tuple(fc.constantFrom('b1', 'b2', 'bb'), fc.stringMatching(/^[ab/]{0,4}$/)).map(([b, k]) => `arn:aws:s3:::${b}${k === '' ? '' : `/${k}`}`),
  prefix: fc.option(fc.stringMatching(/^[ab/]{0,3}$/), { nil: undefined }),
  ip: fc.option(fc.constantFrom('127.0.0.1', '10.1.2.3', '10.1.9.9', '192.168.0.77', '8.8.8.8'), { nil: undefined }),
}).map(({ action, resource, prefix, ip }): AccessRequest => ({ action, resource, principal: 'user1', context: { 's3:prefix': prefix, 'aws:SourceIp': ip } }));

describe('policy evaluator (property)', () => {
  it('agrees with the reference evaluator on random policies and requests', () => {
    fc.assert(fc.property(fc.array(documentArb, { maxLength: 3 }), requestArb, (documents, request) => {
      const policies = documents.map((d) => validatePolicy(d));
      expect(evaluatePolicies(policies, request)).toBe(referenceDecision(documents, request));
    }), options);
  });

  it('an explicit Deny that matches always wins, whatever else allows', () => {
    fc.assert(fc.property(fc.array(documentArb, { maxLength: 3 }), requestArb, (documents, request) => {
      const deny = { Version: '2012-10-17', Statement: [{ Effect: 'Deny', Action: request.action, Resource: request.resource }] };
      const allowAll = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] };
      const policies = [...documents, allowAll, deny].map((d) => validatePolicy(d));
      expect(evaluatePolicies(policies, request)).toBe('Deny');
      expect(isAllowed(policies, request)).toBe(false);
    }), options);
  });

  it('no policy means no access; a policy of only Deny statements allows nothing', () => {
    fc.assert(fc.property(fc.array(documentArb, { maxLength: 3 }), requestArb, (documents, request) => {
      expect(isAllowed([], request)).toBe(false);
      const denials = documents.map((d) => validatePolicy({ ...d, Statement: d.Statement.map((s) => ({ ...s, Effect: 'Deny' })) }));
      expect(isAllowed(denials, request)).toBe(false);
    }), options);
  });

  it('the glob matcher agrees with a regular expression', () => {
    fc.assert(fc.property(fc.stringMatching(/^[ab*?]{0,8}$/), fc.stringMatching(/^[ab]{0,8}$/), (pattern, text) => {
      expect(wildcardMatch(pattern, text, false)).toBe(globToRegExp(pattern, '').test(text));
    }), options);
  });
});

describe('policy evaluator (examples)', () => {
  const request = (action: string, resource: string, context: Record<string, string> = {}): AccessRequest => ({ action, resource, principal: 'u', context });

  it('built-in policies: readonly reads and lists but cannot write; writeonly only writes', () => {
    const readonly = [builtInPolicies.get('readonly')!];
    expect(isAllowed(readonly, request('s3:GetObject', 'arn:aws:s3:::b/k'))).toBe(true);
    expect(isAllowed(readonly, request('s3:ListBucket', 'arn:aws:s3:::b'))).toBe(true);
    expect(isAllowed(readonly, request('s3:PutObject', 'arn:aws:s3:::b/k'))).toBe(false);
    const writeonly = [builtInPolicies.get('writeonly')!];
    expect(isAllowed(writeonly, request('s3:PutObject', 'arn:aws:s3:::b/k'))).toBe(true);
    expect(isAllowed(writeonly, request('s3:GetObject', 'arn:aws:s3:::b/k'))).toBe(false);
    expect(isAllowed([builtInPolicies.get('readwrite')!], request('s3:DeleteBucket', 'arn:aws:s3:::b'))).toBe(true);
    expect(isAllowed([builtInPolicies.get('consoleAdmin')!], request('admin:ServerInfo', '*'))).toBe(true);
  });

  it('s3:prefix and aws:SourceIp conditions, IPv4-mapped addresses included', () => {
    const policy = parsePolicy(JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::b', Condition: { StringLike: { 's3:prefix': 'home/*' }, IpAddress: { 'aws:SourceIp': '127.0.0.0/8' } } }],
    }));
    expect(isAllowed([policy], request('s3:ListBucket', 'arn:aws:s3:::b', { 's3:prefix': 'home/a', 'aws:SourceIp': '::ffff:127.0.0.5' }))).toBe(true);
    expect(isAllowed([policy], request('s3:ListBucket', 'arn:aws:s3:::b', { 's3:prefix': 'other/', 'aws:SourceIp': '127.0.0.5' }))).toBe(false);
    expect(isAllowed([policy], request('s3:ListBucket', 'arn:aws:s3:::b', { 's3:prefix': 'home/a', 'aws:SourceIp': '10.0.0.1' }))).toBe(false);
    expect(isAllowed([policy], request('s3:ListBucket', 'arn:aws:s3:::b', { 'aws:SourceIp': '127.0.0.5' }))).toBe(false);
  });

  it('bucket policies: Principal * covers anonymous callers; named principals only themselves', () => {
    const policy = parsePolicy(JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: 'arn:aws:s3:::pub/public/*' },
        { Effect: 'Allow', Principal: { AWS: ['arn:aws:iam::000000000000:user/alice'] }, Action: 's3:PutObject', Resource: 'arn:aws:s3:::pub/*' },
      ],
    }), { bucket: 'pub' });
    expect(isAllowed([policy], { action: 's3:GetObject', resource: 'arn:aws:s3:::pub/public/x', context: {} })).toBe(true);
    expect(isAllowed([policy], { action: 's3:GetObject', resource: 'arn:aws:s3:::pub/private/x', context: {} })).toBe(false);
    expect(isAllowed([policy], { action: 's3:PutObject', resource: 'arn:aws:s3:::pub/x', context: {} })).toBe(false);
    expect(isAllowed([policy], { action: 's3:PutObject', resource: 'arn:aws:s3:::pub/x', principal: 'alice', context: {} })).toBe(true);
  });

  it('refuses malformed policies by name, saying what is wrong', () => {
    const cases: Array<[unknown, string, { bucket?: string }?]> = [
      [{ Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] }, 'Version'],
      [{ Version: '2012-10-17', Statement: [] }, 'no Statement'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Maybe', Action: '*', Resource: '*' }] }, 'Effect'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'ec2:Run', Resource: '*' }] }, 'action'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', NotAction: 's3:Get*', Resource: '*' }] }, 'exactly one'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: 'arn:aws:ec2:::x' }] }, 'resource'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*', Condition: { NumericLessThan: { 's3:max-keys': '5' } } }] }, 'operator'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*', Condition: { StringEquals: { 'aws:Referer': 'x' } } }] }, 'condition key'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*', Condition: { IpAddress: { 'aws:SourceIp': '300.1.1.1/8' } } }] }, 'CIDR'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: '*', Action: '*', Resource: '*' }] }, 'Principal'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: 'arn:aws:s3:::b/*' }] }, 'Principal', { bucket: 'b' }],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: '*', Action: '*', Resource: 'arn:aws:s3:::other/*' }] }, 'outside bucket', { bucket: 'b' }],
    ];
    for (const [document, words, parseOptions] of cases) {
      let thrown: unknown;
      try {
        validatePolicy(document, parseOptions);
      } catch (error) {
        thrown = error;
      }
      expect(isSvcError(thrown, 'MalformedPolicy'), JSON.stringify(document)).toBe(true);
      expect((thrown as Error).message).toContain(words);
    }
    expect(() => parsePolicy('{not json')).toThrow(/not valid JSON/);
    expect(() => parsePolicy(' '.repeat(30_000))).toThrow(/larger than/);
  });
});

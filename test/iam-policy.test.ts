/**
 * Policy parsing and the evaluator's basic laws (an explicit Deny wins, no policy is no access,
 * the glob matcher), on random policies and on examples; unknown names are refused together, by
 * name. IAM_POLICY_SEED replays a failure (fast-check prints the seed); IAM_POLICY_RUNS raises the
 * number of runs. The evaluator against a reference evaluator: iam-evaluator-property.test.ts.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { adminAction, builtInPolicies, evaluatePolicies, isAllowed, isKnownAction, knownActions, parsePolicy, patternMatchesSomeAction, validatePolicy, wildcardMatch, type AccessRequest } from '../src/iam/index.js';
import { isSvcError } from '../src/errors/index.js';
import { globToRegExpSource, type ReferenceDocument } from './helpers/reference-policy.js';

const runs = Number(process.env.IAM_POLICY_RUNS ?? 300);
const seed = process.env.IAM_POLICY_SEED === undefined ? undefined : Number(process.env.IAM_POLICY_SEED);
const options = { numRuns: runs, ...(seed === undefined ? {} : { seed }) };

function globToRegExp(pattern: string, flags: string): RegExp {
  return new RegExp(`^${globToRegExpSource(pattern)}$`, flags);
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
const documentArb = fc.array(statement, { minLength: 1, maxLength: 4 }).map((s): ReferenceDocument => ({ Version: '2012-10-17', Statement: s }));
const requestArb = fc.record({
  action: fc.constantFrom(...actionNames).map((a) => `s3:${a}`),
  resource: fc.tuple(fc.constantFrom('b1', 'b2', 'bb'), fc.stringMatching(/^[ab/]{0,4}$/)).map(([b, k]) => `arn:aws:s3:::${b}${k === '' ? '' : `/${k}`}`),
  prefix: fc.option(fc.stringMatching(/^[ab/]{0,3}$/), { nil: undefined }),
  ip: fc.option(fc.constantFrom('127.0.0.1', '10.1.2.3', '10.1.9.9', '192.168.0.77', '8.8.8.8'), { nil: undefined }),
}).map(({ action, resource, prefix, ip }): AccessRequest => ({ action, resource, principal: 'user1', context: { 's3:prefix': prefix, 'aws:SourceIp': ip } }));

describe('policy evaluator (property)', () => {
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
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'ec2:Run', Resource: '*' }] }, 'unknown actions: ec2:Run'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', NotAction: 's3:Get*', Resource: '*' }] }, 'exactly one'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: 'arn:aws:ec2:::x' }] }, 'resource'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*', Condition: { NumericBetween: { 's3:max-keys': '5' } } }] }, 'unknown condition operators: NumericBetween'],
      [{ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*', Condition: { StringEquals: { 'aws:RequestedZone': 'x' } } }] }, 'unknown condition keys: aws:RequestedZone'],
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
  });

  it('a bucket policy may name service, canonical-user and federated principals; they match no caller, and an empty Principal is refused', () => {
    const policy = parsePolicy(JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Principal: { Service: 'logging.s3.amazonaws.com', CanonicalUser: 'abc' }, Action: 's3:PutObject', Resource: 'arn:aws:s3:::logs/*' }],
    }), { bucket: 'logs' });
    expect(policy.statements[0]!.principals).toEqual(['service:logging.s3.amazonaws.com', 'canonical:abc']);
    for (const principal of ['alice', 'logging.s3.amazonaws.com', undefined]) {
      expect(isAllowed([policy], { action: 's3:PutObject', resource: 'arn:aws:s3:::logs/x', ...(principal === undefined ? {} : { principal }), context: {} })).toBe(false);
    }
    expect(() => parsePolicy(JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: {}, Action: '*', Resource: 'arn:aws:s3:::logs/*' }] }), { bucket: 'logs' })).toThrow(/names no principal/);
    expect(() => parsePolicy(JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Robot: 'x' }, Action: '*', Resource: 'arn:aws:s3:::logs/*' }] }), { bucket: 'logs' })).toThrow(/unknown field Robot/);
    expect(() => parsePolicy(' '.repeat(30_000))).toThrow(/larger than/);
  });
});

describe('policy names are exact', () => {
  const refusal = (document: unknown, options?: { bucket?: string }): { message: string; details: Record<string, unknown> } => {
    try {
      validatePolicy(document, options);
    } catch (error) {
      expect(isSvcError(error, 'MalformedPolicy')).toBe(true);
      return { message: (error as Error).message, details: { ...(error as { details: Record<string, unknown> }).details } };
    }
    throw new Error(`accepted: ${JSON.stringify(document)}`);
  };
  const statement = (fields: Record<string, unknown>) => ({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Resource: '*', ...fields }] });

  it('lists every unknown action, key, operator and variable of the document at once, in the message and the details', () => {
    const document = {
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Action: ['s3:GetObjekt', 's3:GetObject', 'admin:Fly'], Resource: '*' },
        { Effect: 'Deny', NotAction: ['s3:Pat*', 'kms:Frobnicate', 'admin:Fly'], Resource: 'arn:aws:s3:::b/${aws:nickname}/*' },
        { Effect: 'Allow', Action: 'sts:AssumeRole', Resource: '*', Condition: { StringEquals: { 'aws:RequestedZone': 'x', 's3:prefix': 'a' }, NumericBetween: { 's3:max-keys': '1' }, 'ForSomeValues:StringLike': { 's3:ExistingObjectTag': 'x' } } },
      ],
    };
    const { message, details } = refusal(document);
    expect(message).toBe('The policy is not valid: unknown actions: s3:GetObjekt, admin:Fly, s3:Pat*, kms:Frobnicate; unknown condition keys: aws:RequestedZone, s3:ExistingObjectTag; '
      + 'unknown condition operators: NumericBetween, ForSomeValues:StringLike; unknown policy variables: ${aws:nickname}.');
    expect(details).toMatchObject({
      unknownActions: ['s3:GetObjekt', 'admin:Fly', 's3:Pat*', 'kms:Frobnicate'],
      unknownConditionKeys: ['aws:RequestedZone', 's3:ExistingObjectTag'],
      unknownOperators: ['NumericBetween', 'ForSomeValues:StringLike'],
      unknownVariables: ['${aws:nickname}'],
    });
    expect(refusal(statement({ Action: 'ec2:RunInstances' })).details).toMatchObject({ unknownActions: ['ec2:RunInstances'] });
    expect(refusal(statement({ Action: 's3:?etObjekt' })).details).toMatchObject({ unknownActions: ['s3:?etObjekt'] });
    expect(refusal(statement({ Action: 'iam:*' })).details).toMatchObject({ unknownActions: ['iam:*'] });
  });

  it('accepts every catalogued action of the four services, in any letter case, and wildcards that match one', () => {
    for (const action of ['s3:GetObject', 's3:PutBucketCORS', 's3:CreateStorageLensGroup', 's3:getobject', 'S3:PUTOBJECT', 'admin:CreateUser', 'admin:KMSKeyStatus', 'admin:OBDInfo',
      'sts:AssumeRoleWithWebIdentity', 'kms:CreateKey', 'kms:*', 'sts:*', 'admin:*', 's3:*Tagging', 's3:Get?bject', '*:CreateUser', '*']) {
      expect(() => validatePolicy(statement({ Action: action })), action).not.toThrow();
    }
    expect(knownActions.filter((name) => name.startsWith('s3:')).length).toBeGreaterThan(150);
    expect(isKnownAction('S3:ListBucketVersions')).toBe(true);
    expect(isKnownAction('s3:List*')).toBe(false);
    expect(patternMatchesSomeAction('s3:List*')).toBe(true);
    expect(patternMatchesSomeAction('s3:Lost*')).toBe(false);
    expect(adminAction.createUser).toBe('admin:CreateUser');
    for (const name of Object.values(adminAction)) expect(isKnownAction(name), name).toBe(true);
  });

  it('condition key names compare in any letter case; the tag key and claim after the prefix stay as written', () => {
    const policy = validatePolicy(statement({ Action: 's3:GetObject', Condition: { StringEquals: { 'AWS:SOURCEIP': '1.2.3.4', 'S3:existingobjecttag/Team': 'x', 'JWT:Groups': 'g' } } }));
    expect(policy.statements[0]!.conditions.map((condition) => condition.key)).toEqual(['aws:SourceIp', 's3:ExistingObjectTag/Team', 'jwt:Groups']);
    expect(refusal(statement({ Action: 's3:GetObject', Condition: { StringEquals: { 'jwt:': 'x' } } })).details).toMatchObject({ unknownConditionKeys: ['jwt:'] });
  });

  it('refuses an operand its operator cannot read, naming operator, value and key', () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['NumericLessThan', 's3:max-keys', 'ten', 'NumericLessThan value "ten" for s3:max-keys is not a number'],
      ['NumericEqualsIfExists', 's3:max-keys', '1e3', 'is not a number'],
      ['DateGreaterThan', 'aws:CurrentTime', '31/01/2030', 'DateGreaterThan value "31/01/2030" for aws:CurrentTime is not an ISO 8601 date'],
      ['DateLessThan', 'aws:CurrentTime', '2030-02-30', 'is not an ISO 8601 date'],
      ['DateLessThan', 'aws:CurrentTime', '2030-01-31T12:00:00', 'is not an ISO 8601 date'],
      ['Bool', 'aws:SecureTransport', 'yes', 'Bool value "yes" for aws:SecureTransport is not true or false'],
      ['Null', 's3:prefix', 'maybe', 'is not true or false'],
      ['IpAddress', 'aws:SourceIp', '10.0.0.0/33', 'is not an IP address or CIDR block'],
    ];
    for (const [operator, key, value, words] of cases) {
      expect(refusal(statement({ Action: 's3:GetObject', Condition: { [operator]: { [key]: value } } })).message, `${operator} ${String(value)}`).toContain(words);
    }
    for (const [operator, key, value] of [['DateLessThan', 'aws:CurrentTime', '2030-01-31T12:00:00Z'], ['DateLessThan', 'aws:EpochTime', 1900000000], ['DateEquals', 'aws:CurrentTime', '2030-01-31'],
      ['NumericGreaterThan', 's3:max-keys', 10], ['NumericLessThan', 's3:max-keys', '-2.5'], ['Bool', 'aws:SecureTransport', false], ['Null', 's3:prefix', 'TRUE']] as const) {
      expect(() => validatePolicy(statement({ Action: 's3:GetObject', Condition: { [operator]: { [key]: value } } })), `${operator} ${String(value)}`).not.toThrow();
    }
    expect(refusal(statement({ Action: 's3:GetObject', Condition: { 'ForAnyValue:Null': { 's3:prefix': 'true' } } })).message).toContain('Null checks whether a key is present');
    expect(refusal(statement({ Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/${aws:username' })).message).toContain('without its closing }');
  });
});

/**
 * The production policy evaluator (src/iam) against the reference evaluator of
 * test/helpers/reference-policy.ts, on random policies built from the action catalogue (wildcards,
 * NotAction, Deny, conditions over the known keys and operators, qualifiers, IfExists, policy
 * variables and their escapes) and random requests. SVC_PROPERTY_SEED replays a failure (the seed
 * is printed with it); SVC_PROPERTY_RUNS changes the number of runs.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { evaluatePolicies, knownActions, validatePolicy, type AccessRequest } from '../src/iam/index.js';
import { referenceDecision, type ReferenceContext, type ReferenceDocument } from './helpers/reference-policy.js';

const seed = process.env.SVC_PROPERTY_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.SVC_PROPERTY_SEED);
const numRuns = Number(process.env.SVC_PROPERTY_RUNS ?? 1000);

// ---- requests: small alphabets, so that policies and requests meet often ----
const requestActions = ['s3:GetObject', 's3:PutObject', 's3:ListBucket', 's3:DeleteObject', 's3:GetObjectTagging', 'admin:CreateUser', 'kms:CreateKey', 'sts:AssumeRole'];
const users = ['alice', 'bob'];
const keyText = fc.stringMatching(/^[ab/*?$]{0,4}$/);
const times = ['2030-01-01T00:00:00Z', '2030-06-15T12:30:00Z', '2031-01-01T00:00:00.000Z'];
const epochs = ['1893456000', '1900000000', '1924992000'];

const requestArb = fc.record({
  action: fc.constantFrom(...requestActions),
  bucket: fc.constantFrom('b1', 'b2', ...users),
  key: fc.oneof(keyText, fc.constantFrom(...users).chain((user) => keyText.map((rest) => `${user}/${rest}`))),
  user: fc.option(fc.constantFrom(...users), { nil: undefined }),
  context: fc.record({
    'aws:SourceIp': fc.option(fc.constantFrom('127.0.0.1', '10.1.2.3', '10.1.9.9', '192.168.0.77', '::ffff:10.1.2.3'), { nil: undefined }),
    'aws:SecureTransport': fc.option(fc.constantFrom('true', 'false'), { nil: undefined }),
    'aws:CurrentTime': fc.option(fc.constantFrom(...times), { nil: undefined }),
    'aws:EpochTime': fc.option(fc.constantFrom(...epochs), { nil: undefined }),
    's3:prefix': fc.option(fc.oneof(keyText, fc.constantFrom('alice/', 'bob/x', 'a*', '?')), { nil: undefined }),
    's3:max-keys': fc.option(fc.constantFrom('0', '5', '10', '1000', 'x', '2.5'), { nil: undefined }),
    's3:RequestObjectTagKeys': fc.option(fc.subarray(['team', 'env', 'x*', 'Team']), { nil: undefined }),
    's3:RequestObjectTag/team': fc.option(fc.constantFrom('blue', 'red', 'Blue'), { nil: undefined }),
    's3:ExistingObjectTag/team': fc.option(fc.constantFrom('blue', 'red'), { nil: undefined }),
    'jwt:groups': fc.option(fc.subarray(['dev', 'ops', 'team']), { nil: undefined }),
    'jwt:sub': fc.option(fc.constantFrom('alice', 'u-1'), { nil: undefined }),
  }, { requiredKeys: [] }),
}).map(({ action, bucket, key, user, context }) => {
  const full: ReferenceContext = { ...context, 'aws:username': user, 'aws:userid': user, 'aws:PrincipalType': user === undefined ? 'Anonymous' : 'User' };
  return { action, resource: `arn:aws:s3:::${bucket}/${key}`, ...(user === undefined ? {} : { principal: user }), context: full };
});

// ---- policies ----
const actionPattern = fc.oneof(
  fc.constantFrom(...knownActions),
  fc.constantFrom(...requestActions),
  fc.constantFrom('*', 's3:*', 's3:Get*', 's3:*Object', 's3:?utObject', 'S3:GETOBJECT', 'admin:*', 'kms:*', '*:CreateUser', 's3:*Tagging'),
);
const variable = fc.constantFrom('${aws:username}', '${aws:userid}', '${jwt:sub}', '${aws:PrincipalType}', '${*}', '${?}', '${$}', '${jwt:groups}');
const templateText = fc.array(fc.oneof(fc.constantFrom('a', 'b', '/', '*', '?', 'alice', 'bob', '$'), variable), { maxLength: 4 }).map((parts) => parts.join(''));
const resourcePattern = fc.oneof(
  fc.constant('arn:aws:s3:::*'),
  fc.constant('*'),
  fc.constantFrom('arn:aws:s3:::b1/a${*}', 'arn:aws:s3:::${aws:username}/${?}*', 'arn:aws:s3:::b*/${$}*', 'arn:aws:s3:::alice/${*}${aws:username}'),
  fc.tuple(fc.constantFrom('b1', 'b*', 'alice', '${aws:username}'), templateText).map(([bucket, key]) => `arn:aws:s3:::${bucket}/${key}`),
);

const stringOperators = ['StringEquals', 'StringNotEquals', 'StringEqualsIgnoreCase', 'StringNotEqualsIgnoreCase', 'StringLike', 'StringNotLike'];
const tagWords = fc.constantFrom('team', 'env', 'x*', 'dev', 'ops', 'Team', '*', 'e?v');
const families: Array<[operators: string[], keys: string[], operand: fc.Arbitrary<string>]> = [
  [stringOperators, ['s3:prefix', 'aws:username', 'S3:Prefix', 's3:RequestObjectTag/team', 's3:ExistingObjectTag/team', 'jwt:sub', 'aws:PrincipalType'],
    fc.oneof(templateText, fc.constantFrom('blue', 'BLUE', 'User', '', 'alice/*', 'b*', 'alice', 'a${*}', '${aws:username}/*', '${?}'))],
  // Multi-valued keys: the set qualifiers decide most here.
  [stringOperators, ['s3:RequestObjectTagKeys', 'jwt:groups'], fc.oneof({ weight: 3, arbitrary: tagWords }, { weight: 1, arbitrary: templateText })],
  [['NumericEquals', 'NumericNotEquals', 'NumericLessThan', 'NumericLessThanEquals', 'NumericGreaterThan', 'NumericGreaterThanEquals'],
    ['s3:max-keys', 'aws:EpochTime', 's3:prefix'], fc.constantFrom('0', '5', '10', '2.5', '1900000000', '-1')],
  [['DateEquals', 'DateNotEquals', 'DateLessThan', 'DateLessThanEquals', 'DateGreaterThan', 'DateGreaterThanEquals'],
    ['aws:CurrentTime', 'aws:EpochTime', 's3:max-keys'], fc.constantFrom(...times, ...epochs, '2030-06-15', '2030-06-15T14:30:00+02:00')],
  [['Bool'], ['aws:SecureTransport', 'AWS:securetransport', 's3:prefix'], fc.constantFrom('true', 'false', 'TRUE')],
  [['IpAddress', 'NotIpAddress'], ['aws:SourceIp', 'aws:sourceip'], fc.constantFrom('127.0.0.0/8', '10.1.0.0/16', '10.1.2.3', '192.168.0.0/24', '0.0.0.0/0')],
  [['Null'], ['s3:prefix', 'aws:username', 's3:RequestObjectTagKeys', 'jwt:sub', 's3:ExistingObjectTag/team'], fc.constantFrom('true', 'false')],
];

const conditionArb = fc.constantFrom(...families).chain(([operators, keys, operand]) => fc.record({
  qualifier: operators[0] === 'Null' ? fc.constant('') : fc.constantFrom('', '', 'ForAnyValue:', 'ForAllValues:'),
  operator: fc.constantFrom(...operators),
  ifExists: fc.boolean(),
  key: fc.constantFrom(...keys),
  values: fc.oneof(operand, fc.array(operand, { minLength: 1, maxLength: 3 })),
}));

const statementArb = fc.record({
  effect: fc.constantFrom('Allow', 'Allow', 'Deny'),
  negate: fc.boolean(),
  actions: fc.array(actionPattern, { minLength: 1, maxLength: 3 }),
  resources: fc.array(resourcePattern, { minLength: 1, maxLength: 2 }),
  conditions: fc.array(conditionArb, { maxLength: 3 }),
}).map(({ effect, negate, actions, resources, conditions }) => {
  const statement: Record<string, unknown> = { Effect: effect, [negate ? 'NotAction' : 'Action']: actions, Resource: resources };
  const block: Record<string, Record<string, unknown>> = {};
  for (const c of conditions) (block[`${c.qualifier}${c.operator}${c.ifExists ? 'IfExists' : ''}`] ??= {})[c.key] = c.values;
  if (conditions.length > 0) statement.Condition = block;
  return statement;
});

const documentArb = fc.record({
  Version: fc.constantFrom('2012-10-17', '2012-10-17', '2008-10-17'),
  Statement: fc.array(statementArb, { minLength: 1, maxLength: 3 }),
}).map((document): ReferenceDocument => document);

describe('policy evaluator against the reference (property)', () => {
  it(`agrees on Allow, Deny and NoMatch for random policies and requests (seed ${seed})`, () => {
    try {
      fc.assert(fc.property(fc.array(documentArb, { maxLength: 3 }), requestArb, (documents, request) => {
        const policies = documents.map((document) => validatePolicy(document));
        expect(evaluatePolicies(policies, request as AccessRequest)).toBe(referenceDecision(documents, request));
      }), { seed, numRuns });
    } catch (error) {
      console.error(`iam evaluator property failed: replay with SVC_PROPERTY_SEED=${seed}`);
      throw error;
    }
  });
});

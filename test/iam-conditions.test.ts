/**
 * Condition operators, set qualifiers, IfExists, Null and policy variables (src/iam), each with
 * requests that match and requests that do not, as AWS documents their rules.
 */
import { describe, expect, it } from 'vitest';
import { evaluatePolicies, isAllowed, policiesMentionKey, validatePolicy, type RequestContext } from '../src/iam/index.js';

/** Whether an Allow statement with this Condition block lets a GetObject with this context in. */
function holds(condition: Record<string, unknown>, context: RequestContext): boolean {
  const policy = validatePolicy({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: '*', Condition: condition }] });
  return isAllowed([policy], { action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', principal: 'alice', context });
}

describe('ARN operators', () => {
  it('ArnEquals and ArnLike compare with wildcards alike; their negations are the complement; an absent key makes the negation hold', () => {
    for (const operator of ['ArnEquals', 'ArnLike']) {
      expect(holds({ [operator]: { 'aws:SourceArn': 'arn:aws:s3:::logs-*' } }, { 'aws:SourceArn': 'arn:aws:s3:::logs-2026' })).toBe(true);
      expect(holds({ [operator]: { 'aws:SourceArn': 'arn:aws:s3:::logs-*' } }, { 'aws:SourceArn': 'arn:aws:s3:::other' })).toBe(false);
    }
    expect(holds({ ArnNotLike: { 'aws:SourceArn': 'arn:aws:s3:::logs-*' } }, { 'aws:SourceArn': 'arn:aws:s3:::other' })).toBe(true);
    expect(holds({ ArnNotEquals: { 'aws:SourceArn': 'arn:aws:s3:::logs-*' } }, { 'aws:SourceArn': 'arn:aws:s3:::logs-1' })).toBe(false);
    expect(holds({ ArnLike: { 'aws:SourceArn': 'arn:aws:s3:::*' } }, {})).toBe(false);
    expect(holds({ ArnNotLike: { 'aws:SourceArn': 'arn:aws:s3:::*' } }, {})).toBe(true);
  });

  it('keys this server never has a value for are accepted and judged absent', () => {
    expect(holds({ StringEquals: { 'aws:SourceVpce': 'vpce-1' } }, {})).toBe(false);
    expect(holds({ Null: { 'aws:MultiFactorAuthPresent': 'true' } }, {})).toBe(true);
    expect(holds({ StringEqualsIfExists: { 'aws:PrincipalOrgID': 'o-1' } }, {})).toBe(true);
  });
});

describe('string operators', () => {
  it('StringEquals is exact and case-sensitive; several values are alternatives; NotEquals is none of them', () => {
    expect(holds({ StringEquals: { 's3:prefix': ['a/', 'b/'] } }, { 's3:prefix': 'b/' })).toBe(true);
    expect(holds({ StringEquals: { 's3:prefix': ['a/', 'b/'] } }, { 's3:prefix': 'B/' })).toBe(false);
    expect(holds({ StringNotEquals: { 's3:prefix': ['a/', 'b/'] } }, { 's3:prefix': 'c/' })).toBe(true);
    expect(holds({ StringNotEquals: { 's3:prefix': ['a/', 'b/'] } }, { 's3:prefix': 'a/' })).toBe(false);
  });

  it('IgnoreCase folds letter case on both sides', () => {
    expect(holds({ StringEqualsIgnoreCase: { 'aws:username': 'ALICE' } }, { 'aws:username': 'alice' })).toBe(true);
    expect(holds({ StringEqualsIgnoreCase: { 'aws:username': 'ALICE' } }, { 'aws:username': 'bob' })).toBe(false);
    expect(holds({ StringNotEqualsIgnoreCase: { 'aws:username': 'ALICE' } }, { 'aws:username': 'Alice' })).toBe(false);
    expect(holds({ StringNotEqualsIgnoreCase: { 'aws:username': 'ALICE' } }, { 'aws:username': 'bob' })).toBe(true);
  });

  it('StringLike takes * and ?; StringNotLike is its complement', () => {
    expect(holds({ StringLike: { 's3:prefix': 'home/*/d?' } }, { 's3:prefix': 'home/x/y/dz' })).toBe(true);
    expect(holds({ StringLike: { 's3:prefix': 'home/*/d?' } }, { 's3:prefix': 'home/x/dzz' })).toBe(false);
    expect(holds({ StringNotLike: { 's3:prefix': 'tmp*' } }, { 's3:prefix': 'home/' })).toBe(true);
    expect(holds({ StringNotLike: { 's3:prefix': 'tmp*' } }, { 's3:prefix': 'tmp/1' })).toBe(false);
  });
});

describe('numeric, date, bool and address operators', () => {
  it('Numeric operators compare numbers; a request value that is no number matches nothing', () => {
    const context = { 's3:max-keys': '10' };
    expect(holds({ NumericEquals: { 's3:max-keys': '10.0' } }, context)).toBe(true);
    expect(holds({ NumericNotEquals: { 's3:max-keys': 10 } }, context)).toBe(false);
    expect(holds({ NumericLessThan: { 's3:max-keys': '10' } }, context)).toBe(false);
    expect(holds({ NumericLessThanEquals: { 's3:max-keys': '10' } }, context)).toBe(true);
    expect(holds({ NumericGreaterThan: { 's3:max-keys': '9.5' } }, context)).toBe(true);
    expect(holds({ NumericGreaterThanEquals: { 's3:max-keys': '11' } }, context)).toBe(false);
    expect(holds({ NumericLessThan: { 's3:max-keys': '100' } }, { 's3:max-keys': 'many' })).toBe(false);
    expect(holds({ NumericNotEquals: { 's3:max-keys': '100' } }, { 's3:max-keys': 'many' })).toBe(true);
  });

  it('Date operators compare instants given as ISO 8601 or epoch seconds, on either side', () => {
    const now = { 'aws:CurrentTime': '2030-06-15T12:00:00Z', 'aws:EpochTime': String(Date.parse('2030-06-15T12:00:00Z') / 1000) };
    expect(holds({ DateLessThan: { 'aws:CurrentTime': '2030-07-01T00:00:00Z' } }, now)).toBe(true);
    expect(holds({ DateLessThan: { 'aws:CurrentTime': '2030-06-01' } }, now)).toBe(false);
    expect(holds({ DateGreaterThan: { 'aws:EpochTime': '2030-06-15T11:59:59Z' } }, now)).toBe(true);
    expect(holds({ DateGreaterThanEquals: { 'aws:CurrentTime': now['aws:EpochTime'] } }, now)).toBe(true);
    expect(holds({ DateLessThanEquals: { 'aws:CurrentTime': '2030-06-15T13:59:59+02:00' } }, now)).toBe(false);
    expect(holds({ DateEquals: { 'aws:CurrentTime': '2030-06-15T14:00:00+02:00' } }, now)).toBe(true);
    expect(holds({ DateNotEquals: { 'aws:CurrentTime': '2030-06-15T14:00:00+02:00' } }, now)).toBe(false);
  });

  it('Bool compares true and false in any letter case; IpAddress and NotIpAddress take blocks', () => {
    expect(holds({ Bool: { 'aws:SecureTransport': true } }, { 'aws:SecureTransport': 'true' })).toBe(true);
    expect(holds({ Bool: { 'aws:SecureTransport': 'TRUE' } }, { 'aws:SecureTransport': 'false' })).toBe(false);
    expect(holds({ IpAddress: { 'aws:SourceIp': ['10.0.0.0/8', '::1'] } }, { 'aws:SourceIp': '10.2.3.4' })).toBe(true);
    expect(holds({ IpAddress: { 'aws:SourceIp': ['10.0.0.0/8', '::1'] } }, { 'aws:SourceIp': '::1' })).toBe(true);
    expect(holds({ NotIpAddress: { 'aws:SourceIp': '10.0.0.0/8' } }, { 'aws:SourceIp': '::ffff:10.9.9.9' })).toBe(false);
    expect(holds({ NotIpAddress: { 'aws:SourceIp': '10.0.0.0/8' } }, { 'aws:SourceIp': '11.0.0.1' })).toBe(true);
  });
});

describe('missing keys, IfExists and Null', () => {
  it('a missing key makes a positive operator false and a negated one true; IfExists makes both true', () => {
    for (const operator of ['StringEquals', 'StringLike', 'StringEqualsIgnoreCase', 'NumericEquals', 'DateEquals', 'Bool', 'IpAddress']) {
      const value = operator === 'Bool' ? 'true' : operator === 'IpAddress' ? '10.0.0.0/8' : operator.startsWith('Date') ? '2030-01-01' : '1';
      const key = operator === 'IpAddress' ? 'aws:SourceIp' : 's3:max-keys';
      expect(holds({ [operator]: { [key]: value } }, {}), operator).toBe(false);
      expect(holds({ [`${operator}IfExists`]: { [key]: value } }, {}), `${operator}IfExists`).toBe(true);
    }
    for (const operator of ['StringNotEquals', 'StringNotLike', 'StringNotEqualsIgnoreCase', 'NumericNotEquals', 'DateNotEquals', 'NotIpAddress']) {
      const value = operator === 'NotIpAddress' ? '10.0.0.0/8' : operator.startsWith('Date') ? '2030-01-01' : '1';
      expect(holds({ [operator]: { [operator === 'NotIpAddress' ? 'aws:SourceIp' : 's3:max-keys']: value } }, {}), operator).toBe(true);
    }
    // Present, IfExists judges like the plain operator.
    expect(holds({ StringEqualsIfExists: { 's3:prefix': 'a' } }, { 's3:prefix': 'b' })).toBe(false);
    expect(holds({ StringEqualsIfExists: { 's3:prefix': 'a' } }, { 's3:prefix': 'a' })).toBe(true);
  });

  it('Null true holds when the key is absent (an empty list is absent), false when it is present', () => {
    expect(holds({ Null: { 's3:x-amz-server-side-encryption': 'true' } }, {})).toBe(true);
    expect(holds({ Null: { 's3:x-amz-server-side-encryption': 'true' } }, { 's3:x-amz-server-side-encryption': 'AES256' })).toBe(false);
    expect(holds({ Null: { 's3:x-amz-server-side-encryption': false } }, { 's3:x-amz-server-side-encryption': 'AES256' })).toBe(true);
    expect(holds({ Null: { 's3:RequestObjectTagKeys': 'false' } }, { 's3:RequestObjectTagKeys': [] })).toBe(false);
    expect(holds({ Null: { 's3:prefix': 'false' } }, { 's3:prefix': '' })).toBe(true);
  });
});

describe('multi-valued keys', () => {
  const keys = (...names: string[]) => ({ 's3:RequestObjectTagKeys': names });

  it('ForAnyValue: some request value matches; an absent or empty key is false', () => {
    const condition = { 'ForAnyValue:StringEquals': { 's3:RequestObjectTagKeys': ['team', 'env'] } };
    expect(holds(condition, keys('x', 'team'))).toBe(true);
    expect(holds(condition, keys('x', 'y'))).toBe(false);
    expect(holds(condition, keys())).toBe(false);
    expect(holds(condition, {})).toBe(false);
    expect(holds({ 'ForAnyValue:StringNotLike': { 's3:RequestObjectTagKeys': 't*' } }, keys('team', 'env'))).toBe(true);
    expect(holds({ 'ForAnyValue:StringNotLike': { 's3:RequestObjectTagKeys': 't*' } }, keys('team', 'tier'))).toBe(false);
  });

  it('ForAllValues: every request value matches; an absent or empty key is true', () => {
    const condition = { 'ForAllValues:StringEquals': { 's3:RequestObjectTagKeys': ['team', 'env'] } };
    expect(holds(condition, keys('team', 'env'))).toBe(true);
    expect(holds(condition, keys('team', 'x'))).toBe(false);
    expect(holds(condition, keys())).toBe(true);
    expect(holds(condition, {})).toBe(true);
    expect(holds({ 'ForAllValues:StringNotEquals': { 's3:RequestObjectTagKeys': 'secret' } }, keys('team', 'env'))).toBe(true);
    expect(holds({ 'ForAllValues:StringNotEquals': { 's3:RequestObjectTagKeys': 'secret' } }, keys('team', 'secret'))).toBe(false);
    expect(holds({ 'ForAllValues:StringLikeIfExists': { 's3:RequestObjectTagKeys': 'x' } }, {})).toBe(true);
  });

  it('without a qualifier a positive operator holds when any value matches, a negated one when none does', () => {
    expect(holds({ StringEquals: { 'jwt:groups': 'ops' } }, { 'jwt:groups': ['dev', 'ops'] })).toBe(true);
    expect(holds({ StringNotEquals: { 'jwt:groups': 'ops' } }, { 'jwt:groups': ['dev', 'ops'] })).toBe(false);
    expect(holds({ StringNotEquals: { 'jwt:groups': 'ops' } }, { 'jwt:groups': ['dev'] })).toBe(true);
  });
});

describe('policy variables', () => {
  const home = validatePolicy({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: 'arn:aws:s3:::home/${aws:username}/*' }] });
  const may = (user: string | undefined, resource: string, policy = home) =>
    isAllowed([policy], { action: 's3:GetObject', resource, ...(user ? { principal: user } : {}), context: { 'aws:username': user } });

  it('a resource with ${aws:username} gives each user their own prefix, and nothing to a caller without a user name', () => {
    expect(may('alice', 'arn:aws:s3:::home/alice/notes.txt')).toBe(true);
    expect(may('alice', 'arn:aws:s3:::home/bob/notes.txt')).toBe(false);
    expect(may('bob', 'arn:aws:s3:::home/bob/a/b')).toBe(true);
    expect(may(undefined, 'arn:aws:s3:::home//x')).toBe(false);
    expect(may('*', 'arn:aws:s3:::home/bob/x'), 'a value is literal, never a wildcard').toBe(false);
  });

  it('${*}, ${?} and ${$} are literal characters; in a 2008-10-17 policy ${...} is plain text', () => {
    const escapes = validatePolicy({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/${*}${?}${$}*' }] });
    expect(may('alice', 'arn:aws:s3:::b/*?$anything', escapes)).toBe(true);
    expect(may('alice', 'arn:aws:s3:::b/xy$anything', escapes)).toBe(false);
    const old = validatePolicy({ Version: '2008-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/${aws:username}' }] });
    expect(may('alice', 'arn:aws:s3:::b/alice', old)).toBe(false);
    expect(may('alice', 'arn:aws:s3:::b/${aws:username}', old)).toBe(true);
  });

  it('condition values resolve variables too (string operators); a value whose variable is missing matches nothing', () => {
    const condition = { StringLike: { 's3:prefix': ['${aws:username}/*', 'shared/${jwt:team}/*'] } };
    expect(holds(condition, { 'aws:username': 'alice', 's3:prefix': 'alice/x' })).toBe(true);
    expect(holds(condition, { 'aws:username': 'alice', 's3:prefix': 'bob/x' })).toBe(false);
    expect(holds(condition, { 'jwt:team': 'blue', 's3:prefix': 'shared/blue/x' })).toBe(true);
    expect(holds(condition, { 's3:prefix': 'shared//x' })).toBe(false);
    expect(holds({ StringEquals: { 's3:prefix': '${aws:userid}' } }, { 'aws:userid': 'u1', 's3:prefix': 'u1' })).toBe(true);
    expect(holds({ StringEquals: { 's3:prefix': '${aws:PrincipalType}:${aws:SourceIp}' } }, { 'aws:PrincipalType': 'User', 'aws:SourceIp': '10.0.0.1', 's3:prefix': 'User:10.0.0.1' })).toBe(true);
    expect(holds({ StringNotEquals: { 's3:prefix': '${aws:username}' } }, { 's3:prefix': 'x' }), 'nothing to differ from').toBe(true);
  });
});

describe('tag keys', () => {
  it('policiesMentionKey finds an ExistingObjectTag key in any policy in play', () => {
    const tagged = validatePolicy({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: '*', Condition: { StringEquals: { 's3:existingobjecttag/public': 'yes' } } }] });
    const plain = validatePolicy({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: '*' }] });
    expect(policiesMentionKey([plain, tagged], 's3:ExistingObjectTag/')).toBe(true);
    expect(policiesMentionKey([plain], 's3:ExistingObjectTag/')).toBe(false);
    const request = { action: 's3:GetObject', resource: 'arn:aws:s3:::b/k', context: { 's3:ExistingObjectTag/public': 'yes' } };
    expect(evaluatePolicies([tagged], request)).toBe('Allow');
    expect(evaluatePolicies([tagged], { ...request, context: { 's3:ExistingObjectTag/Public': 'yes' } }), 'tag keys are case-sensitive').toBe('NoMatch');
  });
});

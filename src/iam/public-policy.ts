/** Whether a bucket policy makes its bucket public (GetBucketPolicyStatus, the public access block). Pure. */
import type { Policy } from './policy.js';

/** Public: some statement allows everyone (`Principal: *`) without narrowing callers to source addresses. */
export function isPublicPolicy(policy: Policy): boolean {
  return policy.statements.some((statement) => statement.effect === 'Allow'
    && statement.principals?.includes('*') === true
    && !statement.conditions.some((condition) => condition.key === 'aws:SourceIp' && condition.operator === 'IpAddress'));
}

export * from './policy.js';
export * from './evaluate.js';
export * from './builtin.js';
export * from './principal.js';
export * from './actions.js';
export { isPublicPolicy } from './public-policy.js';
export { canonicalConditionKey } from './condition-keys.js';
export * from './acl.js';

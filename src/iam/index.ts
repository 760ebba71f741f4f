export * from './policy.js';
export * from './evaluate.js';
export * from './builtin.js';
export * from './principal.js';

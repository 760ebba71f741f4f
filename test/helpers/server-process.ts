export * from '../../conformance/harness/server-process.js';

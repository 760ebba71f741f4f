export * from '../../conformance/harness/cluster.js';

export * from '../../conformance/harness/process-cluster.js';

export * from '../../conformance/harness/container-cluster.js';

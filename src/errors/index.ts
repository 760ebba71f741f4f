export { errorCatalogue, isErrorCode, type ErrorCode } from './catalogue.js';
export { SvcError, isSvcError, assert, AssertionError } from './svc-error.js';

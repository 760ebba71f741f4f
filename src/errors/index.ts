export { errorCatalogue, isErrorCode, type ErrorCode } from './catalogue.js';
export { SvcError, isSvcError, assert, AssertionError, withoutStack } from './svc-error.js';

export { CODES, svcError, fail, formatError, SvcFailure } from './errors.js';
export type { ErrorCode, Span, SvcError } from './errors.js';
export { canonicalJson, canonicalHash, sha256Hex, sortKeysDeep } from './canonical.js';
export { editDistance, nearest, didYouMean, knownList, suggestHint } from './suggest.js';
export type { SuggestOptions, HintOptions } from './suggest.js';
export { boundErrors, tooManyErrors, MAX_SHOWN_ERRORS, MAX_ERROR_TEXT } from './bound-errors.js';
export { quote, QUOTE_MAX } from './quote.js';

/**
 * How the S3 artifact store reports a failed request: `store_unavailable` (HTTP 503, retry) with a
 * hint chosen by the kind of failure, or `bad_arguments` for a bucket that does not exist. Pure
 * (no SDK import): it reads the status and name an SDK error carries. Messages name
 * `SVC_RUN_ARTIFACTS_URL` and the bucket, never the URL, a credential or the SDK's message.
 */
import { SvcFailure, svcError } from '../../common/errors.js';

/** Error names that mean the credentials are missing, wrong or not allowed. */
const CREDENTIAL_ERRORS = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'CredentialsProviderError',
  'ExpiredToken',
  'InvalidToken',
]);

/** The HTTP status of an SDK error, when S3 answered. */
export function s3Status(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/** A short name of an error: a network code (ECONNREFUSED) or the SDK's error name; never its message. */
export function s3ErrorName(e: unknown): string {
  const err = e as { code?: unknown; name?: unknown } | null;
  if (typeof err?.code === 'string') return err.code;
  return typeof err?.name === 'string' ? err.name : 'unknown';
}

/** True when S3 answered that the key (not the bucket) does not exist. */
export function isNoSuchKey(e: unknown): boolean {
  const name = s3ErrorName(e);
  return name !== 'NoSuchBucket' && (s3Status(e) === 404 || name === 'NoSuchKey');
}

/** True when S3 answered that the bucket does not exist. */
export function isNoSuchBucket(e: unknown): boolean {
  return s3Status(e) === 404 || s3ErrorName(e) === 'NoSuchBucket';
}

/**
 * `store_unavailable`: the store of `bucket` could not `what` ("be reached", "read a snapshot").
 * The cause holds the error's name and HTTP status only.
 */
export function storeUnavailable(
  bucket: string,
  what: string,
  e: unknown,
  store = 'run artifact store of SVC_RUN_ARTIFACTS_URL',
): SvcFailure {
  const name = s3ErrorName(e);
  const status = s3Status(e);
  const hint =
    status === 403 || CREDENTIAL_ERRORS.has(name)
      ? 'check the AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile or an instance role) and that they may list, read, write and delete in the bucket'
      : status === 301 || name === 'PermanentRedirect'
        ? 'the bucket is in another region: set SVC_S3_REGION to its region'
        : 'check that the object store is up and reachable (SVC_S3_ENDPOINT, the network), then retry shortly';
  return new SvcFailure([
    svcError('store_unavailable', `the S3 ${store} (bucket \`${bucket}\`) could not ${what}`, {
      hint,
      cause: status !== undefined ? `${name} (HTTP ${status})` : name,
    }),
  ]);
}

/** `bad_arguments`: the bucket of SVC_RUN_ARTIFACTS_URL does not exist (svc never creates one). */
export function noSuchBucket(bucket: string, setting = 'SVC_RUN_ARTIFACTS_URL'): SvcFailure {
  return new SvcFailure([
    svcError('bad_arguments', `${setting}: the S3 bucket \`${bucket}\` does not exist`, {
      hint: `create it first (aws s3 mb s3://${bucket}, or mc mb for MinIO) or name an existing bucket; svc never creates buckets`,
    }),
  ]);
}

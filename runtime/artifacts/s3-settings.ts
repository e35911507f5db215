/**
 * Where the S3 run artifact store lives and how it is reached: the `s3://bucket/prefix` URL
 * (`parseS3Url`) and the `SVC_S3_*` settings (`s3SettingsFromEnv`). Pure, no AWS SDK: store.ts
 * reads these settings in every server, and only a server whose URL is `s3://` loads the SDK
 * (s3-store.ts). Credentials are not settings of ours: the SDK takes them from its standard
 * provider chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, an instance role).
 */
import { SvcFailure, svcError, type SvcError } from '../../common/errors.js';

/** How the S3 client reaches the store. Unset fields take the defaults of `s3SettingsFromEnv`. */
export interface S3Settings {
  /** `SVC_S3_ENDPOINT`: the http(s) endpoint of an S3-compatible store (MinIO, ...); unset = AWS S3. */
  endpoint?: string;
  /** `SVC_S3_FORCE_PATH_STYLE`: the bucket in the path, not the host name (default: true when an endpoint is set). */
  forcePathStyle?: boolean;
  /** `SVC_S3_REGION`, else `AWS_REGION`, else `us-east-1`. */
  region?: string;
}

/** The bucket and key prefix of an `s3://bucket/prefix` URL; `prefix` has no leading or trailing slash ('' = bucket root). */
export interface S3Location {
  bucket: string;
  prefix: string;
}

export const DEFAULT_S3_REGION = 'us-east-1';

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** The characters AWS calls safe in object keys (besides `/`, which separates segments). */
const PREFIX_SEGMENT = /^[A-Za-z0-9!_.*'()-]+$/;
/** Keys are at most 1024 bytes; `<id>.json` takes 71 of them. */
const PREFIX_MAX = 900;
const REGION = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/**
 * The S3 settings of an environment: `SVC_S3_ENDPOINT`, `SVC_S3_FORCE_PATH_STYLE` and
 * `SVC_S3_REGION` (falling back to `AWS_REGION`, then `us-east-1`), defaults filled in. A bad
 * value of one of ours is pushed onto `errors` as `bad_arguments` naming the variable. Empty
 * values count as unset.
 */
export function s3SettingsFromEnv(env: Record<string, string | undefined>, errors: SvcError[]): S3Settings {
  const endpoint = endpointOf(env.SVC_S3_ENDPOINT?.trim(), errors);
  const pathStyle = env.SVC_S3_FORCE_PATH_STYLE?.trim().toLowerCase();
  let forcePathStyle = endpoint !== undefined;
  if (pathStyle === 'true' || pathStyle === 'false') forcePathStyle = pathStyle === 'true';
  else if (pathStyle) {
    errors.push(
      bad(`SVC_S3_FORCE_PATH_STYLE=${quoted(pathStyle)} is not true or false`, 'set it to true or false, or unset it'),
    );
  }
  const own = env.SVC_S3_REGION?.trim();
  if (own && !REGION.test(own)) {
    errors.push(
      bad(
        `SVC_S3_REGION=${quoted(own)} is not a region name`,
        'set SVC_S3_REGION to a region such as us-east-1, or unset it',
      ),
    );
  }
  // AWS_REGION is the SDK's own variable: taken as it is.
  const region = own || env.AWS_REGION?.trim() || DEFAULT_S3_REGION;
  const settings: S3Settings = { forcePathStyle, region };
  if (endpoint !== undefined) settings.endpoint = endpoint;
  return settings;
}

/** The endpoint URL, or undefined (unset, or bad: then an error is pushed). Never echoes the value. */
function endpointOf(raw: string | undefined, errors: SvcError[]): string | undefined {
  if (!raw) return undefined;
  let u: URL | undefined;
  try {
    u = new URL(raw);
  } catch {
    /* reported below */
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash) {
    errors.push(
      bad(
        'SVC_S3_ENDPOINT is not an http(s) URL without query or fragment',
        'write the endpoint of the S3-compatible store, e.g. http://127.0.0.1:9000, or unset it for AWS S3',
      ),
    );
    return undefined;
  }
  if (u.username || u.password) {
    errors.push(
      bad(
        'SVC_S3_ENDPOINT carries credentials',
        'remove the user:password part; credentials come from the AWS provider chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile or an instance role)',
      ),
    );
    return undefined;
  }
  return raw;
}

/**
 * The bucket and prefix of `s3://bucket/prefix` (scheme case-insensitive; slashes of the prefix
 * normalised: `s3://b//runs/x/` → prefix `runs/x`). Throws `bad_arguments` for an invalid bucket
 * name, a prefix with unsafe characters or `.`/`..` segments, a port, a query, a fragment, or
 * credentials in the URL. Messages never echo the URL.
 * @example parseS3Url('s3://svc-runs/prod/runs') // { bucket: 'svc-runs', prefix: 'prod/runs' }
 */
export function parseS3Url(url: string): S3Location {
  const m = /^s3:\/\/([^/?#]*)([^?#]*)$/i.exec(url.trim());
  if (!m) {
    throw failure('SVC_RUN_ARTIFACTS_URL: an s3 URL takes no query or fragment', 'write s3://bucket/prefix');
  }
  const authority = m[1]!;
  if (authority.includes('@')) {
    throw failure(
      'SVC_RUN_ARTIFACTS_URL carries credentials',
      'remove the user:password part; credentials come from the AWS provider chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile or an instance role)',
    );
  }
  if (authority.includes(':')) {
    throw failure(
      'SVC_RUN_ARTIFACTS_URL: an s3 URL names a bucket, not a host and port',
      'write s3://bucket/prefix, and the endpoint of an S3-compatible store in SVC_S3_ENDPOINT',
    );
  }
  if (!isBucketName(authority)) {
    throw failure(
      'SVC_RUN_ARTIFACTS_URL: the bucket is not a valid S3 bucket name',
      'a bucket name has 3 to 63 characters: lower-case letters, digits, dots and hyphens, beginning and ending with a letter or digit, no `..`, not an IP address (write s3://bucket/prefix)',
    );
  }
  return { bucket: authority, prefix: prefixOf(m[2]!) };
}

function prefixOf(path: string): string {
  const segments = path.split('/').filter((s) => s !== '');
  const prefix = segments.join('/');
  if (segments.some((s) => s === '.' || s === '..' || !PREFIX_SEGMENT.test(s)) || prefix.length > PREFIX_MAX) {
    throw failure(
      'SVC_RUN_ARTIFACTS_URL: the key prefix has characters S3 does not keep safe, a `.` or `..` segment, or is too long',
      `use letters, digits and ! _ . * ' ( ) - in the segments of the prefix, at most ${PREFIX_MAX} characters`,
    );
  }
  return prefix;
}

/** True for a valid S3 bucket name (the rules of general purpose buckets). */
export function isBucketName(name: string): boolean {
  return BUCKET.test(name) && !name.includes('..') && !/^\d+\.\d+\.\d+\.\d+$/.test(name);
}

function quoted(raw: string): string {
  return JSON.stringify(raw.slice(0, 40));
}

function bad(message: string, hint: string): SvcError {
  return svcError('bad_arguments', message, { hint });
}

function failure(message: string, hint: string): SvcFailure {
  return new SvcFailure([bad(message, hint)]);
}

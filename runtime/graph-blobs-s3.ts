/** The S3 blob store of the session graph (graph-blobs.ts); imported only for an `s3://` URL. */
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { isNoSuchBucket, isNoSuchKey, noSuchBucket, storeUnavailable } from './artifacts/s3-errors.js';
import { parseS3Url, type S3Settings } from './artifacts/s3-settings.js';
import { clientConfig } from './artifacts/s3-store.js';

/** Structurally a `Blobs` (graph-blobs.ts imports this module lazily; no import back). */
export class S3Blobs {
  private constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
  ) {}

  static async open(url: string, s3: S3Settings): Promise<S3Blobs> {
    const where = parseS3Url(url);
    const client = new S3Client(clientConfig(s3));
    try {
      await client.send(new HeadBucketCommand({ Bucket: where.bucket }));
    } catch (e) {
      client.destroy();
      throw isNoSuchBucket(e)
        ? noSuchBucket(where.bucket, 'SVC_GRAPH_CACHE_URL')
        : storeUnavailable(where.bucket, 'be reached', e, 'session graph store of SVC_GRAPH_CACHE_URL');
    }
    return new S3Blobs(client, where.bucket, where.prefix ? `${where.prefix}/` : '');
  }

  async list(dir: string): Promise<string[]> {
    const Prefix = `${this.prefix}${dir}/`;
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix, ...(token ? { ContinuationToken: token } : {}) }),
      );
      for (const o of page.Contents ?? []) if (o.Key?.endsWith('.json')) out.push(o.Key.slice(Prefix.length));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.filter((n) => !n.includes('/')).sort();
  }

  async get(key: string): Promise<string | undefined> {
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
      return got.Body ? await got.Body.transformToString('utf8') : undefined;
    } catch (e) {
      if (isNoSuchKey(e)) return undefined;
      throw e;
    }
  }

  async put(key: string, body: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.prefix + key,
        Body: body,
        ContentType: 'application/json',
      }),
    );
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000)
      await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: keys.slice(i, i + 1000).map((k) => ({ Key: this.prefix + k })), Quiet: true },
        }),
      );
  }

  close(): void {
    this.client.destroy();
  }
}

/**
 * Test helper: a real S3-compatible server (s3rver) on 127.0.0.1 and a free port, with an empty
 * data directory removed on close. It runs in a child Node process started with
 * `--openssl-legacy-provider`: s3rver encrypts its ListObjectsV2 continuation tokens with DES,
 * which OpenSSL 3 (Node ≥ 17) refuses otherwise, so listing more than one page would answer 500.
 * Credentials are s3rver's fixed `S3RVER` / `S3RVER`. With `port` and `dir` it starts on that port
 * over that data directory (which close then leaves in place): how a test stops the store and
 * brings the same one back.
 *
 * @example
 * const s3 = await startS3rver();
 * t.teardown(() => s3.close());
 * await s3.client.send(new CreateBucketCommand({ Bucket: 'runs' }));
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { S3Client } from '@aws-sdk/client-s3';

/** s3rver's fixed credentials. */
export const S3RVER_KEY = 'S3RVER';

export interface RunningS3rver {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  port: number;
  /** A path-style client of the server, for arranging and inspecting buckets in tests. */
  client: S3Client;
  /** Stop the server (idempotent) and remove its data. */
  close(): Promise<void>;
}

const CHILD = `
const S3rver = require('s3rver');
const srv = new S3rver({ port: Number(process.env.S3RVER_PORT), address: '127.0.0.1', silent: true, directory: process.env.S3RVER_DIR });
srv.run().then(
  ({ port }) => process.stdout.write(JSON.stringify({ port }) + '\\n'),
  (e) => { process.stderr.write(String(e) + '\\n'); process.exit(1); },
);
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

/** Set the credentials the SDK's provider chain finds, and silence its Node 20 support warning. */
export function useS3rverCredentials(): void {
  process.env.AWS_ACCESS_KEY_ID = S3RVER_KEY;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_KEY;
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
}

export interface S3rverOptions {
  /** Listen on this port (default: a free one). */
  port?: number;
  /** Keep the data here (owned by the caller: close leaves it); default a new temporary directory. */
  dir?: string;
}

/** Start s3rver; resolves once it listens. */
export async function startS3rver(opts: S3rverOptions = {}): Promise<RunningS3rver> {
  useS3rverCredentials();
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'svc-s3rver-'));
  const removeDir = () => {
    if (!opts.dir) rmSync(dir, { recursive: true, force: true });
  };
  const env: NodeJS.ProcessEnv = { ...process.env, S3RVER_DIR: dir, S3RVER_PORT: String(opts.port ?? 0) };
  delete env.NODE_OPTIONS; // tap's loader hooks are not for this child
  const child = spawn(process.execPath, ['--openssl-legacy-provider', '-e', CHILD], {
    cwd: join(import.meta.dirname, '..', '..'),
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let port: number;
  try {
    port = await portOf(child);
  } catch (e) {
    child.kill();
    removeDir();
    throw e;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true });
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      client.destroy();
      const exited = new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
      child.stdin?.end();
      await exited;
      removeDir();
    })());
  return { endpoint, port, client, close };
}

/** The port the child reports on its first stdout line. */
function portOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}) before listening`)));
    lines.once('line', (line) => {
      const port = (JSON.parse(line) as { port?: unknown }).port;
      if (typeof port === 'number') resolve(port);
      else reject(new Error(`s3rver said ${line}`));
    });
  });
}

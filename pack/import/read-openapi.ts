/**
 * I/O edge of importing: find the OpenAPI document (a file, or the one document in a directory),
 * parse it with swagger-parser (local files only, no network), check that every `$ref` stays
 * inside the document's folder or an allowed one (ref-policy.ts), and dereference it (a Swagger
 * 2.0 document is bundled and converted with swagger2openapi first). Failures become
 * `SvcFailure`s with stable codes: `openapi_unreadable`, `openapi_invalid`, `openapi_bad_ref`,
 * `openapi_ref_outside`, `bad_arguments` (an `--allow-ref-dir` that is not a directory).
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { convertObj } from 'swagger2openapi';
import { parse as parseYaml } from 'yaml';
import { svcError, SvcFailure } from '../../common/errors.js';
import { errnoCode } from '../errno.js';
import { admitter, checkRefs, REF_HINT, type RefIo } from './ref-policy.js';
import { isObj, type Schema } from './schema.js';

const PREFERRED = ['openapi.yaml', 'openapi.yml', 'openapi.json', 'swagger.yaml', 'swagger.yml', 'swagger.json'];

/** What `readOpenApi` may read besides the document's own folder. */
export interface ReadOptions {
  /** Folders a `$ref` may also read from (`--allow-ref-dir`); URLs stay refused. */
  allowRefDirs?: readonly string[];
}

const fail = (
  code: 'openapi_unreadable' | 'openapi_invalid' | 'openapi_bad_ref',
  message: string,
  hint: string,
  cause?: string,
) => new SvcFailure([svcError(code, message, { hint, ...(cause ? { cause } : {}) })]);

const realOrUndefined = (path: string) => realpath(path).catch(() => undefined);

/**
 * The check's file reads: real paths, and a file's content as JSON or else YAML (repeated keys
 * allowed, as the resolver's parsers allow them), undefined if it is neither.
 */
const REF_IO: RefIo = {
  realpath: realOrUndefined,
  load: async (path) => {
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      try {
        return parseYaml(text, { uniqueKeys: false }) as unknown;
      } catch {
        return undefined;
      }
    }
  },
};

/** The real folders a `$ref` may read from: the document's, then each `--allow-ref-dir`. */
async function refRoots(file: string, allow: readonly string[]): Promise<string[]> {
  const roots = [(await realOrUndefined(dirname(file))) ?? dirname(file)];
  for (const dir of allow) {
    const real = await realOrUndefined(dir);
    if (real === undefined || !(await stat(real)).isDirectory())
      throw new SvcFailure([
        svcError('bad_arguments', `--allow-ref-dir \`${dir}\` is not a directory`, {
          hint: "name an existing folder the document's $refs may read from",
        }),
      ]);
    roots.push(real);
  }
  return roots;
}

/**
 * swagger-parser's options: no HTTP resolver, and a file resolver that reads only what `admits`
 * admits (symlinks followed first). The walk of ref-policy.ts refuses first and says where; this
 * guard holds even where that walk could not look (a file it could not parse, a `$ref` left by
 * the Swagger 2.0 converter). `refused` keeps what it refused.
 */
function resolverOptions(admits: (real: string) => boolean) {
  const refused: string[] = [];
  const read = async ({ url }: { url: string }): Promise<Buffer> => {
    const u = new URL(url, 'file:///');
    const real = u.protocol === 'file:' && !u.host ? await realpath(fileURLToPath(u)) : undefined;
    if (real === undefined || !admits(real)) {
      refused.push(url);
      throw new Error(`svc refuses to read \`${url}\` (outside the allowed folders)`);
    }
    return readFile(real);
  };
  return {
    refused,
    options: {
      resolve: { http: false as const, file: { read } },
      dereference: { circular: true as const },
    },
  };
}

/** The document file `input` names: itself, or the one OpenAPI file of a directory. */
async function documentFile(input: string): Promise<string> {
  let isDir: boolean;
  try {
    isDir = (await stat(input)).isDirectory();
  } catch (e) {
    throw fail(
      'openapi_unreadable',
      `cannot read \`${input}\``,
      'check the path of the OpenAPI document',
      errnoCode(e),
    );
  }
  if (!isDir) return input;
  const names = (await readdir(input)).sort();
  const pick =
    PREFERRED.find((n) => names.includes(n)) ??
    (names.filter((n) => /\.(ya?ml|json)$/.test(n)).length === 1
      ? names.find((n) => /\.(ya?ml|json)$/.test(n))
      : undefined);
  if (!pick)
    throw fail(
      'openapi_unreadable',
      `no OpenAPI document in directory \`${input}\``,
      'name it openapi.yaml (or .json), or pass the file itself',
    );
  return join(input, pick);
}

/** What a swagger-parser failure means for the user. */
function translate(e: unknown, file: string): SvcFailure {
  if (e instanceof SvcFailure) return e;
  const err = e as { name?: string; message?: string; code?: string; errors?: unknown[] };
  const msg = String(err.message ?? e)
    .split('\n')[0]!
    .slice(0, 300);
  if (err.code === 'ENOENT' || err.code === 'EACCES' || err.code === 'EISDIR')
    return fail('openapi_unreadable', `cannot read \`${file}\``, 'check the path and its permissions', err.code);
  if (
    /MissingPointer|ResolverError|InvalidPointer/.test(String(err.name)) ||
    /missing|resolve|pointer|\$ref/i.test(msg)
  )
    return fail(
      'openapi_bad_ref',
      `a $ref of \`${file}\` does not resolve: ${msg}`,
      'fix the $ref (svc reads local files only, never URLs)',
    );
  return fail(
    'openapi_invalid',
    `\`${file}\` is not a readable OpenAPI document: ${msg}`,
    'pass an OpenAPI 3.x or Swagger 2.0 document in YAML or JSON',
  );
}

/** What the resolver's guard refused, when the walk of ref-policy.ts did not see it first. */
const guardRefusal = (file: string, url: string) =>
  new SvcFailure([
    svcError(
      'openapi_ref_outside',
      `a $ref of this document or of a file it reads leads to \`${url}\`, outside the document's folder and every --allow-ref-dir`,
      { file, hint: REF_HINT },
    ),
  ]);

/**
 * The dereferenced OpenAPI 3.x document at `input` (a file or a directory holding one). A `$ref`
 * may read files only inside the document's folder or `opts.allowRefDirs`; URLs are never fetched.
 */
export async function readOpenApi(input: string, opts: ReadOptions = {}): Promise<Schema> {
  const file = await documentFile(input);
  const admits = admitter((await realOrUndefined(file)) ?? file, await refRoots(file, opts.allowRefDirs ?? []));
  const { options, refused } = resolverOptions(admits);
  try {
    const raw = (await SwaggerParser.parse(file, options)) as unknown as Schema;
    if (!isObj(raw) || (typeof raw.openapi !== 'string' && raw.swagger !== '2.0'))
      throw fail(
        'openapi_invalid',
        `\`${file}\` is not an OpenAPI document`,
        'it needs `openapi: 3.x` or `swagger: "2.0"` at the top',
      );
    await checkRefs(file, raw, admits, REF_IO);
    // OpenAPI 3.x: dereference the document already parsed (external files are read on the way);
    // bundling first would parse it again and crawl every $ref twice (most of the time on large
    // documents). Swagger 2.0 is bundled into one document for the converter first; the converter
    // resolves nothing itself (`resolve: false`): the bundle has no external $ref left.
    if (raw.swagger !== '2.0') return await SwaggerParser.dereference(file, raw as never, options);
    const bundled = (await SwaggerParser.bundle(file, options)) as unknown as Schema;
    const { openapi } = await convertObj(bundled, { patch: true, warnOnly: true, resolve: false });
    return await SwaggerParser.dereference(openapi as never, options);
  } catch (e) {
    if (refused.length > 0 && !(e instanceof SvcFailure)) throw guardRefusal(file, refused[0]!);
    throw translate(e, file);
  }
}

/**
 * I/O edge of importing: find the OpenAPI document (a file, or the one document in a directory),
 * parse it with swagger-parser (local files only, no network), and dereference it (a Swagger 2.0
 * document is bundled and converted with swagger2openapi first). Failures become `SvcFailure`s with stable codes:
 * `openapi_unreadable`, `openapi_invalid`, `openapi_bad_ref`.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { convertObj } from 'swagger2openapi';
import { svcError, SvcFailure } from '../../common/errors.js';
import { errnoCode } from '../errno.js';
import { isObj, type Schema } from './schema.js';

const PREFERRED = ['openapi.yaml', 'openapi.yml', 'openapi.json', 'swagger.yaml', 'swagger.yml', 'swagger.json'];
const OPTIONS = { resolve: { http: false as const }, dereference: { circular: true as const } };

const fail = (
  code: 'openapi_unreadable' | 'openapi_invalid' | 'openapi_bad_ref',
  message: string,
  hint: string,
  cause?: string,
) => new SvcFailure([svcError(code, message, { hint, ...(cause ? { cause } : {}) })]);

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

/** The dereferenced OpenAPI 3.x document at `input` (a file or a directory holding one). */
export async function readOpenApi(input: string): Promise<Schema> {
  const file = await documentFile(input);
  try {
    const raw = (await SwaggerParser.parse(file, OPTIONS)) as unknown as Schema;
    if (!isObj(raw) || (typeof raw.openapi !== 'string' && raw.swagger !== '2.0'))
      throw fail(
        'openapi_invalid',
        `\`${file}\` is not an OpenAPI document`,
        'it needs `openapi: 3.x` or `swagger: "2.0"` at the top',
      );
    // OpenAPI 3.x: dereference the document already parsed (external files are read on the way);
    // bundling first would parse it again and crawl every $ref twice (most of the time on large
    // documents). Swagger 2.0 is bundled into one document for the converter first.
    if (raw.swagger !== '2.0') return await SwaggerParser.dereference(file, raw as never, OPTIONS);
    const bundled = (await SwaggerParser.bundle(file, OPTIONS)) as unknown as Schema;
    const { openapi } = await convertObj(bundled, { patch: true, warnOnly: true });
    return await SwaggerParser.dereference(openapi as never, OPTIONS);
  } catch (e) {
    throw translate(e, file);
  }
}

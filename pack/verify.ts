/**
 * Decoding and verifying one CGS artifact (pure): JSON, format version, interchange schema, hash,
 * manifest agreement and the semantic checks. Problems name the file.
 */
import { Type } from '@sinclair/typebox';
import type { SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import { canonicalHash } from '../common/canonical.js';
import { check, validateCgsShape } from './ajv.js';
import type { Cgs } from './cgs.js';
import { SVC_CATALOG_FORMAT_VERSION } from './cgs.js';
import { checkCgs } from './check.js';
import type { CgsCheck } from './compile-source.js';
import { ManifestSchema, type Manifest } from './artifact.js';
import { schemaProblems } from './schema-errors.js';

export type Verified = { ok: true; cgs: Cgs; cgs_hash: string } | { ok: false; problems: SvcError[] };

const ARTIFACT_NAME = /^([a-z][a-z0-9_-]*)\.v(\d+)\.([0-9a-f]{12})\.cgs\.json$/;

/** Decode and check a CGS file. `expected` comes from its manifest (absent for `--schema`). */
export function verifyCgs(text: string, file: string, expected?: Manifest, extraChecks: CgsCheck[] = []): Verified {
  const fail = (code: SvcError['code'], message: string, hint: string, path?: string): Verified => ({
    ok: false,
    problems: [svcError(code, message, { file, hint, ...(path !== undefined ? { path } : {}) })],
  });
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return fail(
      'artifact_unreadable',
      `not valid JSON (${(e instanceof Error ? e.message : String(e)).split('\n')[0]})`,
      'repack the catalog with `svc pack`; artifacts are never edited by hand',
    );
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    return fail('cgs_invalid', 'a CGS is a JSON object', 'repack the catalog with `svc pack`');
  const fv = 'format_version' in data ? data.format_version : undefined;
  if (fv !== SVC_CATALOG_FORMAT_VERSION) {
    return fail(
      'unsupported_format_version',
      `format_version ${JSON.stringify(fv)} is not supported (this svc reads ${SVC_CATALOG_FORMAT_VERSION})`,
      'repack the catalog source with this version of `svc pack`',
    );
  }
  const shape = schemaProblems(validateCgsShape(data));
  if (shape.length) {
    return {
      ok: false,
      problems: shape.map((p) =>
        svcError('cgs_invalid', p.message, {
          file,
          path: '/' + p.path.join('/'),
          hint: p.hint ?? 'repack the catalog with `svc pack`',
        }),
      ),
    };
  }
  const cgs = data as Cgs;
  const hash = canonicalHash(cgs);
  if (expected && hash !== expected.cgs_hash) {
    return fail(
      'hash_mismatch',
      `content hashes to ${hash.slice(0, 12)}..., the manifest says ${expected.cgs_hash.slice(0, 12)}...`,
      'the artifact was changed after packing: repack from source and replace both files',
    );
  }
  const named = ARTIFACT_NAME.exec(file.split(/[\\/]/).pop() ?? '');
  if (named && named[3] !== hash.slice(0, 12)) {
    return fail(
      'hash_mismatch',
      `content hashes to ${hash.slice(0, 12)}..., the file name says ${named[3]}`,
      'the artifact was changed after packing: repack from source',
    );
  }
  if (expected && (expected.entry_id !== cgs.entry_id || expected.version !== cgs.version)) {
    return fail(
      'manifest_mismatch',
      `manifest says ${expected.entry_id} v${expected.version}, the CGS is ${cgs.entry_id} v${cgs.version}`,
      'repack the catalog; manifest and CGS are written together',
    );
  }
  const semantic = [...checkCgs(cgs), ...extraChecks.flatMap((c) => c(cgs))];
  if (semantic.length) return { ok: false, problems: semantic.map((l) => ({ ...l.error, file, path: l.at })) };
  return { ok: true, cgs, cgs_hash: hash };
}

/**
 * What reading a manifest requires: every field svc writes but `format_version`, which the CGS
 * itself carries and `verifyCgs` checks (`unsupported_format_version`). Other keys are ignored.
 */
export const ManifestFileSchema = Type.Omit(ManifestSchema, ['format_version'], { $id: 'svc:manifest-file' });

/** Decode a manifest file; `artifact` must be a bare file name in the same directory. */
export function parseManifest(text: string, file: string): { manifest?: Manifest; problem?: SvcError } {
  const bad = (message: string): { problem: SvcError } => ({
    problem: svcError('artifact_unreadable', message, { file, hint: 'repack the catalog with `svc pack`' }),
  });
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return bad('manifest is not valid JSON');
  }
  const m = check(ManifestFileSchema, data);
  if (!m.ok) {
    if (m.errors.some((e) => e.instancePath === '' && e.keyword === 'type'))
      return bad('manifest is not a JSON object');
    const artifact = m.errors.every((e) => e.instancePath === '/artifact' && e.keyword === 'pattern');
    return bad(
      artifact
        ? `manifest artifact \`${String(m.errors[0]?.data)}\` is not a bare file name`
        : 'manifest needs entry_id, version, a 64-hex cgs_hash and artifact',
    );
  }
  const { entry_id, version, cgs_hash, artifact } = m.value;
  return { manifest: { entry_id, version, cgs_hash, artifact, format_version: SVC_CATALOG_FORMAT_VERSION } };
}

/** Artifact file names, manifests and their exact bytes (deterministic: same CGS, same bytes). */
import { Type, type Static } from '@sinclair/typebox';
import { sortKeysDeep } from '../common/canonical.js';
import type { Cgs } from './cgs.js';
import { SVC_CATALOG_FORMAT_VERSION } from './cgs.js';

/** The manifest next to each CGS artifact, as `svc pack` writes it (JSON Schema + type, defined once). */
export const ManifestSchema = Type.Object(
  {
    entry_id: Type.String(),
    version: Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
    cgs_hash: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 hex of the canonical JSON of the CGS.' }),
    artifact: Type.String({
      pattern: '^(?!\\.)[A-Za-z0-9._-]+$',
      description: 'File name of the CGS artifact, in the same directory.',
    }),
    format_version: Type.Literal(SVC_CATALOG_FORMAT_VERSION),
  },
  { $id: 'https://svc.invalid/schemas/manifest.schema.json', title: 'svc catalog manifest' },
);

export type Manifest = Static<typeof ManifestSchema>;

/** `<entry_id>.v<version>.<hash12>` */
export function artifactStem(entryId: string, version: number, cgsHash: string): string {
  return `${entryId}.v${version}.${cgsHash.slice(0, 12)}`;
}

export const cgsFileName = (entryId: string, version: number, hash: string) =>
  `${artifactStem(entryId, version, hash)}.cgs.json`;
export const manifestFileName = (entryId: string, version: number, hash: string) =>
  `${artifactStem(entryId, version, hash)}.manifest.json`;

export function manifestFor(cgs: Cgs, cgsHash: string): Manifest {
  return {
    entry_id: cgs.entry_id,
    version: cgs.version,
    cgs_hash: cgsHash,
    artifact: cgsFileName(cgs.entry_id, cgs.version, cgsHash),
    format_version: SVC_CATALOG_FORMAT_VERSION,
  };
}

/** Pretty JSON with sorted keys and a final newline: readable diffs, byte-identical on repack. */
export function serialize(value: unknown): string {
  return JSON.stringify(sortKeysDeep(value), null, 2) + '\n';
}

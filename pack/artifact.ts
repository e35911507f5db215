/** Artifact file names, manifests and their exact bytes (deterministic: same CGS, same bytes). */
import { sortKeysDeep } from '../common/canonical.js';
import type { Cgs } from './cgs.js';
import { SVC_CATALOG_FORMAT_VERSION } from './cgs.js';

export interface Manifest {
  entry_id: string;
  version: number;
  cgs_hash: string;
  /** File name of the CGS artifact, in the same directory. */
  artifact: string;
  format_version: typeof SVC_CATALOG_FORMAT_VERSION;
}

/** `<entry_id>.v<version>.<hash12>` */
export function artifactStem(entryId: string, version: number, cgsHash: string): string {
  return `${entryId}.v${version}.${cgsHash.slice(0, 12)}`;
}

export const cgsFileName = (entryId: string, version: number, hash: string) => `${artifactStem(entryId, version, hash)}.cgs.json`;
export const manifestFileName = (entryId: string, version: number, hash: string) => `${artifactStem(entryId, version, hash)}.manifest.json`;

export function manifestFor(cgs: Cgs, cgsHash: string): Manifest {
  return { entry_id: cgs.entry_id, version: cgs.version, cgs_hash: cgsHash, artifact: cgsFileName(cgs.entry_id, cgs.version, cgsHash), format_version: SVC_CATALOG_FORMAT_VERSION };
}

/** Pretty JSON with sorted keys and a final newline: readable diffs, byte-identical on repack. */
export function serialize(value: unknown): string {
  return JSON.stringify(sortKeysDeep(value), null, 2) + '\n';
}

/**
 * A catalog as `svc context` fetches it (`GET /v1/registry/{entry_id}?include_cgs=true`): verified
 * in full (shape, references, hash) before the session pins it. Only `svc context` loads this
 * module (and with it the schema validator); `svc run` checks the cached copy's hash alone.
 */
import { verifyCgs } from '../../pack/verify.js';
import { registryEntry, type RegistryEntry } from '../../pack/registry.js';
import { TERMINAL_EXIT, TerminalError } from '../terminal/errors.js';

/** A registry entry built from a fetched CGS; throws when its content does not hash to `cgs_hash`. */
export function entryFromCgs(api: string, cgs: unknown, cgsHash: string): RegistryEntry {
  const v = verifyCgs(JSON.stringify(cgs), `${api}.json`);
  if (!v.ok)
    throw new TerminalError(
      v.problems[0]?.code ?? 'cgs_invalid',
      `catalog ${api} from the server does not verify: ${v.problems[0]?.message ?? ''}`,
      'this svc and the server may be of different versions',
      TERMINAL_EXIT.program,
    );
  if (v.cgs_hash !== cgsHash || v.cgs.entry_id !== api)
    throw new TerminalError(
      'hash_mismatch',
      `catalog ${api} hashes to ${v.cgs_hash.slice(0, 12)}..., the server says ${cgsHash.slice(0, 12)}...`,
      'run `svc context --new` to fetch it again',
      TERMINAL_EXIT.program,
    );
  return registryEntry(v.cgs, v.cgs_hash, `${v.cgs.entry_id}.json`);
}

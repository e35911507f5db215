/**
 * Makes an imported catalog one that `svc pack` accepts: packs the emitted files with the checks
 * the caller passes (the compiler's teachability check among them), drops each capability,
 * relation or field a diagnostic points at, and repeats until the catalog is clean. What is
 * dropped is logged with the diagnostic that caused it.
 */
import type { SvcError } from '../../common/errors.js';
import { emitCatalog } from './emit-yaml.js';
import type { ImportCatalog, ImportLog } from './model.js';

/** Packs the files (name -> text) and returns the diagnostics; empty when clean. */
export type PackFiles = (files: Record<string, string>) => SvcError[];

interface Owner {
  section: 'capabilities' | 'mappings' | 'entities' | 'catalog';
  name?: string;
  relation?: string;
  field?: string;
}

/** The item of an emitted file that line `line` (1-based) belongs to, by its indentation. */
export function ownerOf(text: string, file: string, line: number): Owner | undefined {
  const lines = text.split('\n');
  const section = file.replace(/\.yaml$/, '');
  if (section === 'catalog') return { section: 'catalog' };
  let name: string | undefined;
  let group: string | undefined;
  let member: string | undefined;
  for (let i = 0; i < Math.min(line, lines.length); i++) {
    const l = lines[i]!;
    let m;
    if ((m = /^ {2}([A-Za-z_]\w*):/.exec(l))) [name, group, member] = [m[1], undefined, undefined];
    else if ((m = /^ {4}([a-z_]+):/.exec(l))) [group, member] = [m[1], undefined];
    else if ((m = /^ {6}([A-Za-z_]\w*):/.exec(l))) member = m[1];
  }
  if (!name) return undefined;
  if (section === 'capabilities' || section === 'mappings') return { section, name };
  if (section !== 'entities') return undefined;
  if (group === 'relations' && member) return { section, name, relation: member };
  if (group === 'fields' && member) return { section, name, field: member };
  return { section, name };
}

function drop(c: ImportCatalog, o: Owner, why: string, log: ImportLog): boolean {
  if (o.section === 'catalog') return false;
  if (o.section === 'capabilities' || o.section === 'mappings') {
    const cap = c.capabilities.find((k) => k.name === o.name);
    if (!cap) return false;
    c.capabilities = c.capabilities.filter((k) => k !== cap);
    for (const e of c.entities) e.relations = e.relations.filter((r) => r.capability !== cap.name);
    log.skipped.push({
      what: cap.origin,
      reason: 'pack_refused',
      why: `\`svc pack\` refused capability \`${cap.name}\`: ${why}`,
    });
    return true;
  }
  const e = c.entities.find((x) => x.name === o.name);
  if (!e) return false;
  if (o.relation) {
    e.relations = e.relations.filter((r) => r.name !== o.relation);
    log.skipped.push({ what: `relation ${e.name}.${o.relation}`, reason: 'pack_refused', why });
    return true;
  }
  if (o.field && o.field !== e.id) {
    e.fields.delete(o.field);
    log.skipped.push({ what: `field ${e.name}.${o.field}`, reason: 'pack_refused', why });
    return true;
  }
  c.entities = c.entities.filter((x) => x !== e);
  // Its capabilities go with it: each operation is listed, so none is lost without a reason.
  for (const k of c.capabilities.filter((k) => k.entity === e.name))
    log.skipped.push({ what: k.origin, reason: 'pack_refused', why: `its entity ${e.name} was refused: ${why}` });
  c.capabilities = c.capabilities.filter((k) => k.entity !== e.name);
  for (const x of c.entities) x.relations = x.relations.filter((r) => r.target !== e.name);
  log.skipped.push({ what: `entity ${e.name}`, reason: 'pack_refused', why });
  return true;
}

/** Emits and packs until clean; returns the files of the clean catalog, or the diagnostics left. */
export function settle(
  c: ImportCatalog,
  pack: PackFiles,
  log: ImportLog,
): { files: Record<string, string>; diagnostics: SvcError[] } {
  for (let round = 0; ; round++) {
    const files = emitCatalog(c);
    const diagnostics = pack(files);
    if (diagnostics.length === 0 || round >= 20) return { files, diagnostics };
    let progress = false;
    for (const d of diagnostics) {
      const file = d.span?.file?.split(/[\\/]/).pop();
      const text = file ? files[file] : undefined;
      const owner = text && file && d.span ? ownerOf(text, file, d.span.line) : undefined;
      if (owner && drop(c, owner, `${d.code}: ${d.message}`, log)) progress = true;
    }
    if (!progress) return { files, diagnostics };
  }
}

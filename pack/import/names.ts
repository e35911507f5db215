/**
 * Names an agent can use, derived from operationIds, schema names and paths. Deterministic: the
 * same input gives the same names. Collisions get the suffix `2`, `3`, ... in document order
 * (`listIssues`, `listIssues2`); names that the program language reserves get `_param`.
 */

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether `s` is a valid catalog name (entity, field, parameter, capability, relation). */
export function isName(s: string): boolean {
  return NAME.test(s);
}

/** Words of an identifier or path segment: `repos/list-for-org` -> [repos, list, for, org]. */
function words(s: string): string[] {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w.length > 0);
}

const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/** `list-for-org` -> `listForOrg`; keeps existing camelCase; empty or digit-led -> prefixed `op`. */
export function camelName(s: string, fallback = 'op'): string {
  const ws = words(s);
  if (ws.length === 0) return fallback;
  const out = ws.map((w, i) => (i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : cap(w))).join('');
  return /^[0-9]/.test(out) ? fallback + cap(out) : out;
}

/** `simple-user` -> `SimpleUser`, `pet` -> `Pet`. */
export function pascalName(s: string, fallback = 'Item'): string {
  const ws = words(s);
  if (ws.length === 0) return fallback;
  const out = ws.map(cap).join('');
  return /^[0-9]/.test(out) ? fallback + out : out;
}

/** A parameter or field name: the wire name when valid, else its words in camelCase. */
export function safeName(wire: string): string {
  return isName(wire) ? wire : camelName(wire, 'param');
}

/** English singular of a plural path segment, good enough for resource names. */
export function singular(w: string): string {
  if (/ies$/i.test(w) && w.length > 4) return w.slice(0, -3) + 'y';
  if (/(ss|us|is)$/i.test(w)) return w;
  if (/(xes|ches|shes|sses)$/i.test(w)) return w.slice(0, -2);
  if (/s$/i.test(w) && w.length > 2) return w.slice(0, -1);
  return w;
}

/** Names the program language reads itself: `limit`, `sort`, `order` and symbol-like names. */
export function isReserved(name: string): boolean {
  return /^(limit|sort|order)$/.test(name) || /^(e|m|r|p|s|o|pg|pc|pr)\d+$/.test(name);
}

/** Hands out unique names: the first taker keeps `base`, later ones get `base2`, `base3`, ... */
export class NameSet {
  private readonly taken = new Set<string>();
  constructor(reserved: Iterable<string> = []) {
    for (const r of reserved) this.taken.add(r);
  }
  has(name: string): boolean {
    return this.taken.has(name);
  }
  take(base: string): string {
    let name = base;
    for (let i = 2; this.taken.has(name); i++) name = `${base}${i}`;
    this.taken.add(name);
    return name;
  }
}

/** HTML entities a document's text commonly holds, and what they stand for. */
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'", nbsp: ' ' };

/**
 * One line of plain text: the first paragraph, markdown links reduced to their text, HTML tags
 * removed and common entities decoded, bold (`**x**`, `__x__`), italic (`*x*`) and code spans
 * (`` `x` ``) reduced to their text, at most `max` characters.
 */
export function oneLine(text: unknown, max = 160): string {
  if (typeof text !== 'string') return '';
  const para = text.trim().split(/\n\s*\n/)[0] ?? '';
  let s = para
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/&(amp|lt|gt|quot|apos|#39|nbsp);/g, (_m, e: string) => ENTITIES[e]!)
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])/g, '$1')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  if (s.length > max) {
    const cut = s.slice(0, max - 3);
    const space = cut.lastIndexOf(' ');
    s = (space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, '') + '...';
  }
  return s;
}

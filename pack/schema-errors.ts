/**
 * Turns ajv's raw errors into few, readable diagnostics: one per real problem, with the location
 * (as a path of keys) and a hint. `anyOf` noise from shorthand alternatives is collapsed.
 */
import type { ErrorObject } from 'ajv';
import { nearest, suggestHint } from '../common/suggest.js';

export interface SchemaProblem {
  /** Keys from the document root to the offending node. */
  path: Array<string | number>;
  /** True when the position should be the key of the last path element (unknown or bad key). */
  atKey: boolean;
  message: string;
  hint?: string;
}

const TRIVIAL = new Set(['type', 'enum', 'const', 'pattern']);

export function schemaProblems(errors: ErrorObject[]): SchemaProblem[] {
  const anyOfs = errors.filter((e) => e.keyword === 'anyOf');
  const dropped = new Set<ErrorObject>();
  for (const a of anyOfs) {
    const inside = errors.filter(
      (e) =>
        e !== a &&
        e.schemaPath.startsWith(a.schemaPath + '/') &&
        (e.instancePath === a.instancePath || e.instancePath.startsWith(a.instancePath + '/')),
    );
    const meaningful = inside.filter((e) => e.instancePath !== a.instancePath || !TRIVIAL.has(e.keyword));
    // A string that misses an enum branch (a misspelt type name) is best told as that enum error.
    const enumMiss =
      typeof a.data === 'string'
        ? inside.find((e) => e.keyword === 'enum' && e.instancePath === a.instancePath)
        : undefined;
    if (meaningful.length > 0 || enumMiss) {
      dropped.add(a);
      for (const e of inside) if (!meaningful.includes(e) && e !== enumMiss) dropped.add(e);
    } else {
      for (const e of inside) dropped.add(e);
    }
  }
  const out: SchemaProblem[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (dropped.has(e) || e.keyword === 'if') continue;
    const p = describe(e);
    const key = JSON.stringify([p.path, p.message]);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(p);
    }
  }
  return out;
}

function pointerToPath(pointer: string): Array<string | number> {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 40 ? s.slice(0, 37) + '...' : s;
}

function describe(e: ErrorObject): SchemaProblem {
  const path = pointerToPath(e.instancePath);
  const params = e.params as Record<string, unknown>;
  const parent = e.parentSchema as { description?: string; properties?: Record<string, unknown> } | undefined;
  switch (e.keyword) {
    case 'additionalProperties': {
      const extra = String(params.additionalProperty);
      const known = Object.keys(parent?.properties ?? {});
      return {
        path: [...path, extra],
        atKey: true,
        message: `unknown key \`${extra}\``,
        hint: cutValueHint(extra, known) ?? suggestHint(extra, known),
      };
    }
    case 'required': {
      const missing = String(params.missingProperty);
      return {
        path,
        atKey: path.length > 0,
        message: `missing required key \`${missing}\``,
        hint: `add \`${missing}:\` here`,
      };
    }
    case 'propertyNames': {
      const bad = String(params.propertyName);
      return {
        path: [...path, bad],
        atKey: true,
        message: `\`${bad}\` is not a valid name`,
        hint: 'names start with a letter or `_` and hold only letters, digits and `_`',
      };
    }
    case 'type':
      return {
        path,
        atKey: false,
        message: `expected ${String(params.type).replace(/,/g, ' or ')}, found ${show(e.data)}`,
        hint: `write ${withArticle(String(params.type).replace(/,/g, ' or '))} here${parent?.description ? ` (${parent.description})` : ''}`,
      };
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map((v) => String(v));
      return {
        path,
        atKey: false,
        message: `${show(e.data)} is not allowed here`,
        hint: suggestHint(String(e.data), allowed),
      };
    }
    case 'anyOf':
      return {
        path,
        atKey: false,
        message: `${show(e.data)} has the wrong form`,
        hint: parent?.description ?? 'see docs/authoring.md',
      };
    case 'pattern':
      return {
        path,
        atKey: false,
        message: `${show(e.data)} does not match the pattern ${String(params.pattern)}`,
        hint: describePattern(String(params.pattern)),
      };
    case 'uniqueItems':
      return { path, atKey: false, message: 'a list repeats an item', hint: 'remove the repeated item' };
    default:
      return {
        path,
        atKey: false,
        message: e.message ?? `breaks the \`${e.keyword}\` rule`,
        hint: parent?.description,
      };
  }
}

function describePattern(pattern: string): string {
  if (pattern.startsWith('^(GET|')) return 'write "METHOD /path", for example "GET /breweries/{id}"';
  if (pattern === '^https?://') return 'write an absolute http:// or https:// URL';
  if (pattern === '^/') return 'a path starts with `/`';
  if (pattern.startsWith('^[A-Z_]')) return 'environment variable names are upper case: letters, digits and `_`';
  return 'see docs/authoring.md';
}

/** `a string`, `an object`, `an integer or null`. */
function withArticle(type: string): string {
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/**
 * `description: Full name, such as Ann Lee}` in a flow mapping: the unquoted comma ends the value
 * and `such as Ann Lee` becomes a key. A key that is no name (spaces, punctuation) and near no
 * known key is most likely such a remainder: say to quote the value.
 */
function cutValueHint(extra: string, known: string[]): string | undefined {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(extra) || nearest(extra, known).length) return undefined;
  return `\`${extra}\` looks like the rest of a value cut at a comma: inside {...} an unquoted comma ends the value; quote the value ("..., ${extra}") or write the mapping in block style`;
}

/**
 * Semantic checks of a CGS: everything the JSON Schema cannot say (references, duplicates, kinds,
 * templates). Run at pack time (diagnostics mapped back to YAML positions) and again at load time
 * on every artifact, so a hand-edited CGS gets the same scrutiny. Pure: returns problems as values.
 */
import { displayUrl, hasUserinfo } from './urls.js';
import type { ErrorCode, SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import { suggestHint } from '../common/suggest.js';
import type { Capability, Cgs, Entity, FieldDef, ParamDef, TypeSpec } from './cgs.js';
import { ENTRY_ID_PATTERN, SCALAR_TYPES } from './cgs.js';
import { jsonTemplateParams, parseTemplate } from './template.js';
import { isPoisoned } from './normalize.js';

/** A problem and the CGS JSON pointer it is about. */
export interface Located {
  error: SvcError;
  at: string;
}

/** Names whose declarations were dropped earlier (schema errors): references to them are not re-reported. */
export type Poisoned = ReadonlySet<string>;

export function checkCgs(cgs: Cgs, poisoned: Poisoned = new Set()): Located[] {
  const out: Located[] = [];
  const fail = (at: string, code: ErrorCode, message: string, hint?: string) =>
    out.push({ error: svcError(code, message, hint ? { hint } : {}), at });
  const entityNames = cgs.entities.map((e) => e.name);
  const capNames = cgs.capabilities.map((c) => c.name);
  // First declarations by name (a second one is a duplicate_name): lookups stay linear in big catalogs.
  const index: Index = { entities: firstByName(cgs.entities), capabilities: firstByName(cgs.capabilities) };
  const knownEntity: KnownEntity = Object.assign(
    (n: string) => index.entities.has(n) || isPoisoned(poisoned, 'entities', n),
    { names: entityNames },
  );
  const knownCap = (n: string) => index.capabilities.has(n) || isPoisoned(poisoned, 'capabilities', n);

  checkHeader(cgs, (at, ...rest) => {
    if (!isPoisoned(poisoned, 'catalog', at.split('/')[1]!)) fail(at, ...rest);
  });
  duplicates(entityNames, '/entities', 'entity', fail);
  duplicates(capNames, '/capabilities', 'capability', fail);

  // A name declared twice is reported once (above); only its first declaration is checked further.
  cgs.entities.forEach((e, i) => {
    if (index.entities.get(e.name) === e)
      checkEntity(
        cgs,
        index,
        e,
        `/entities/${i}`,
        knownEntity,
        knownCap,
        (n) => isPoisoned(poisoned, 'entities', e.name, 'fields', n),
        fail,
      );
  });
  cgs.capabilities.forEach((c, i) => {
    if (index.capabilities.get(c.name) === c)
      checkCapability(cgs, index, c, `/capabilities/${i}`, knownEntity, poisoned, fail);
  });
  return out;
}

type Fail = (at: string, code: ErrorCode, message: string, hint?: string) => void;
type KnownEntity = ((n: string) => boolean) & { names: string[] };
interface Index {
  entities: Map<string, Entity>;
  capabilities: Map<string, Capability>;
}

function firstByName<T extends { name: string }>(items: T[]): Map<string, T> {
  const out = new Map<string, T>();
  for (const x of items) if (!out.has(x.name)) out.set(x.name, x);
  return out;
}

function checkHeader(cgs: Cgs, fail: Fail): void {
  if (!ENTRY_ID_PATTERN.test(cgs.entry_id)) {
    fail(
      '/entry_id',
      'unsafe_entry_id',
      `entry_id \`${cgs.entry_id}\` is not a safe identifier`,
      'use a lower-case letter first, then lower-case letters, digits, `_` or `-` (at most 63), for example `brewery`',
    );
  }
  if (!Number.isSafeInteger(cgs.version) || cgs.version < 1) {
    fail(
      '/version',
      'bad_version',
      `version ${JSON.stringify(cgs.version)} is not a positive integer`,
      'write `version: 1` and raise it by one for each published change',
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(cgs.backend.base_url);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    fail(
      '/backend/base_url',
      'bad_backend',
      `backend URL \`${displayUrl(cgs.backend.base_url)}\` is not an absolute http(s) URL`,
      'write for example `backend: {url: https://api.example.com/v2}`',
    );
  } else if (hasUserinfo(cgs.backend.base_url)) {
    // A catalog is served as it is (include_cgs=true): a credential in it would reach every agent.
    fail(
      '/backend/base_url',
      'bad_backend',
      `backend URL \`${displayUrl(cgs.backend.base_url)}\` carries user:password`,
      'remove it: declare the credential in the auth block, which names an environment variable',
    );
  }
  if (
    cgs.auth.scheme === 'oauth2_client_credentials' &&
    typeof cgs.auth.token_url === 'string' &&
    hasUserinfo(cgs.auth.token_url)
  ) {
    fail(
      '/auth/token_url',
      'bad_auth',
      `token_url \`${displayUrl(cgs.auth.token_url)}\` carries user:password`,
      'remove it: the client id and secret come from client_id_env and client_secret_env',
    );
  }
  const a = cgs.auth as unknown as Record<string, unknown>;
  const need: Record<string, string[]> = {
    none: [],
    api_key: ['in', 'name', 'env'],
    bearer: ['env'],
    basic: ['username_env', 'password_env'],
    oauth2_client_credentials: ['token_url', 'client_id_env', 'client_secret_env'],
  };
  for (const k of need[cgs.auth.scheme] ?? []) {
    if (a[k] === undefined)
      fail(
        '/auth',
        'bad_auth',
        `auth scheme \`${cgs.auth.scheme}\` needs \`${k}\``,
        `add \`${k}:\` to the auth block (secrets are named by environment variable, never written in the catalog)`,
      );
  }
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`;
}

function duplicates(names: string[], at: string, what: string, fail: Fail): void {
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (seen.has(n))
      fail(
        `${at}/${i}`,
        'duplicate_name',
        `${what} \`${n}\` is declared twice`,
        `rename or remove one of the two \`${n}\` declarations`,
      );
    seen.add(n);
  });
}

function checkEntity(
  cgs: Cgs,
  index: Index,
  e: Entity,
  at: string,
  knownEntity: KnownEntity,
  knownCap: (n: string) => boolean,
  droppedField: (n: string) => boolean,
  fail: Fail,
): void {
  const fieldNames = e.fields.map((f) => f.name);
  duplicates(fieldNames, `${at}/fields`, `field of ${e.name}:`, fail);
  if (!fieldNames.includes(e.id_field) && !droppedField(e.id_field)) {
    fail(
      `${at}/id_field`,
      'missing_id_field',
      `entity \`${e.name}\` has no id field \`${e.id_field}\` among its fields`,
      `declare the field \`${e.id_field}\`, or name the id field with \`id: <field>\` (${suggestHint(e.id_field, fieldNames)})`,
    );
  }
  e.fields.forEach((f, i) => checkType(f, `${at}/fields/${i}`, `field \`${e.name}.${f.name}\``, knownEntity, fail));
  e.relations.forEach((r, i) => {
    const rat = `${at}/relations/${i}`;
    if (fieldNames.includes(r.name))
      fail(
        rat,
        'duplicate_name',
        `relation \`${r.name}\` of ${e.name} has the name of a field`,
        'give the relation a name no field of the entity uses',
      );
    if (e.relations.findIndex((x) => x.name === r.name) < i)
      fail(rat, 'duplicate_name', `relation \`${r.name}\` of ${e.name} is declared twice`, 'remove one of the two');
    if (!knownEntity(r.target)) {
      fail(
        `${rat}/target`,
        'unknown_entity',
        `relation \`${e.name}.${r.name}\` targets unknown entity \`${r.target}\``,
        suggestHint(
          r.target,
          cgs.entities.map((x) => x.name),
        ),
      );
    }
    const cap = index.capabilities.get(r.capability);
    if (!cap) {
      if (!knownCap(r.capability))
        fail(
          `${rat}/capability`,
          'unknown_capability',
          `relation \`${e.name}.${r.name}\` is followed by unknown capability \`${r.capability}\``,
          suggestHint(
            r.capability,
            (knownEntity.names.includes(r.target)
              ? cgs.capabilities.filter((c) => c.entity === r.target)
              : cgs.capabilities
            ).map((c) => c.name),
          ),
        );
      return;
    }
    if (cap.kind !== 'query' && cap.kind !== 'get' && cap.kind !== 'search') {
      fail(
        `${rat}/capability`,
        'bad_relation',
        `relation \`${e.name}.${r.name}\` is followed by \`${cap.name}\`, a ${cap.kind}: following a relation must not change vendor data`,
        'follow relations with a query, get or search capability',
      );
    }
    if (cap.entity !== r.target)
      fail(
        `${rat}/capability`,
        'bad_relation',
        `relation \`${e.name}.${r.name}\` targets ${r.target} but capability \`${cap.name}\` returns ${cap.entity}`,
        `use a capability of ${r.target}`,
      );
    const want = r.cardinality === 'many' ? 'rows' : 'row';
    if (cap.returns !== want)
      fail(
        `${rat}/cardinality`,
        'bad_relation',
        `relation \`${e.name}.${r.name}\` has cardinality ${r.cardinality} but \`${cap.name}\` returns ${cap.returns}`,
        r.cardinality === 'many'
          ? 'follow a many-relation with a query or search capability'
          : 'follow a one-relation with a get capability',
      );
    for (const [param, field] of Object.entries(r.bind)) {
      if (!cap.params.some((p) => p.name === param))
        fail(
          `${rat}/bind/${param}`,
          'unknown_parameter',
          `relation \`${e.name}.${r.name}\` binds \`${param}\`, which \`${cap.name}\` does not take`,
          suggestHint(
            param,
            cap.params.map((p) => p.name),
          ),
        );
      if (!fieldNames.includes(field) && !droppedField(field))
        fail(
          `${rat}/bind/${param}`,
          'unknown_field',
          `relation \`${e.name}.${r.name}\` binds \`${param}\` to unknown field \`${field}\` of ${e.name}`,
          suggestHint(field, fieldNames),
        );
    }
    for (const p of cap.params) {
      if (p.required && !(p.name in r.bind))
        fail(
          `${rat}/bind`,
          'bad_relation',
          `relation \`${e.name}.${r.name}\` leaves required parameter \`${p.name}\` of \`${cap.name}\` unbound`,
          `add \`${p.name}: <field of ${e.name}>\` to bind`,
        );
    }
  });
}

function checkType(t: TypeSpec, at: string, what: string, knownEntity: KnownEntity, fail: Fail): void {
  const entityNames = knownEntity.names;
  const x = t as TypeSpec & { values?: unknown; entity?: unknown; items?: unknown; fields?: FieldDef[] };
  if (t.type === 'enum') {
    const values = Array.isArray(x.values) ? x.values : [];
    if (values.length === 0)
      fail(at, 'bad_type', `${what} is an enum without values`, 'list the allowed values: `values: [a, b]`');
    if (new Set(values).size !== values.length)
      fail(at, 'bad_enum', `${what} repeats an enum value`, 'list each allowed value once');
  } else if (x.values !== undefined) {
    fail(at, 'bad_type', `${what} has \`values\` but is not an enum`, 'write `type: enum` or remove `values`');
  }
  if (t.type === 'ref') {
    if (typeof x.entity !== 'string')
      fail(at, 'bad_type', `${what} is a ref without \`entity\``, 'name the entity it refers to: `entity: Brewery`');
    else if (!knownEntity(x.entity))
      fail(
        at,
        'unknown_entity',
        `${what} refers to unknown entity \`${x.entity}\``,
        `declare the entity or fix the name (${suggestHint(x.entity, entityNames)})`,
      );
  } else if (x.entity !== undefined) {
    fail(at, 'bad_type', `${what} has \`entity\` but is not a ref`, 'write `type: ref` or remove `entity`');
  }
  if (t.type === 'array') {
    if (!x.items)
      fail(at, 'bad_type', `${what} is an array without \`items\``, 'give the element type: `items: string`');
    else checkType(x.items as TypeSpec, `${at}/items`, `items of ${what}`, knownEntity, fail);
  }
  if (t.type === 'object')
    x.fields?.forEach((f, i) => checkType(f, `${at}/fields/${i}`, `field \`${f.name}\` of ${what}`, knownEntity, fail));
}

function sortType(t: TypeSpec | FieldDef): unknown {
  const { name: _n, description: _d, ...rest } = t as FieldDef;
  return Object.fromEntries(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** True when `v` is a value of type `t` (used for defaults). */
export function valueFits(t: TypeSpec, v: unknown): boolean {
  switch (t.type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isSafeInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'date':
      return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v));
    case 'datetime':
      return typeof v === 'string' && !Number.isNaN(Date.parse(v)) && /^\d{4}-\d{2}-\d{2}T/.test(v);
    case 'enum':
      return t.values.includes(v as string | number);
    case 'ref':
      return typeof v === 'string' || Number.isSafeInteger(v);
    case 'array':
      return Array.isArray(v) && v.every((x) => valueFits(t.items, x));
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
  }
}

function checkCapability(
  cgs: Cgs,
  index: Index,
  c: Capability,
  at: string,
  knownEntity: KnownEntity,
  poisoned: Poisoned,
  fail: Fail,
): void {
  const entity = index.entities.get(c.entity);
  if (!entity && !knownEntity(c.entity))
    fail(
      `${at}/entity`,
      'unknown_entity',
      `capability \`${c.name}\` is about unknown entity \`${c.entity}\``,
      suggestHint(
        c.entity,
        cgs.entities.map((e) => e.name),
      ),
    );
  const names = c.params.map((p) => p.name);
  duplicates(names, `${at}/params`, `parameter of ${c.name}:`, fail);
  c.params.forEach((p, i) => checkParam(c, p, entity, `${at}/params/${i}`, knownEntity, fail));
  const droppedParam = (n: string) => isPoisoned(poisoned, 'capabilities', c.name, 'params', n);
  checkKind(c, at, fail);
  if (!isPoisoned(poisoned, 'mappings', c.name)) checkMapping(c, at, droppedParam, fail);
}

function checkParam(
  c: Capability,
  p: ParamDef,
  entity: Entity | undefined,
  at: string,
  knownEntity: KnownEntity,
  fail: Fail,
): void {
  // A type taken from the entity field of the same name is checked (and reported) at the field.
  const { name: _n, description: _d, required: _r, default: _v, ...type } = p;
  const field = entity?.fields.find((f) => f.name === p.name);
  const inherited = field !== undefined && JSON.stringify(sortType(field)) === JSON.stringify(sortType(type));
  if (!inherited) checkType(p, at, `parameter \`${c.name}.${p.name}\``, knownEntity, fail);
  if (p.default === undefined) return;
  if (p.type === 'enum' && Array.isArray(p.values) && !p.values.includes(p.default as string)) {
    fail(
      `${at}/default`,
      'bad_enum',
      `default ${JSON.stringify(p.default)} of \`${c.name}.${p.name}\` is not one of its values`,
      `use one of: ${p.values.map((v) => JSON.stringify(v)).join(', ')}`,
    );
  } else if (
    p.type !== 'enum' &&
    (SCALAR_TYPES as readonly string[]).concat(['array']).includes(p.type) &&
    !valueFits(p, p.default)
  ) {
    fail(
      `${at}/default`,
      'bad_default',
      `default ${JSON.stringify(p.default)} of \`${c.name}.${p.name}\` is not ${article(p.type)}`,
      `write ${article(p.type)} value or remove the default`,
    );
  }
  if (p.required)
    fail(
      `${at}/default`,
      'bad_default',
      `\`${c.name}.${p.name}\` is required and also has a default`,
      'a parameter with a default is optional: remove `required: true` or the default',
    );
}

function checkKind(c: Capability, at: string, fail: Fail): void {
  const names = c.params.map((p) => p.name);
  if (c.id_param !== undefined && !names.includes(c.id_param)) {
    fail(
      `${at}/id_param`,
      'unknown_parameter',
      `id_param \`${c.id_param}\` of \`${c.name}\` is not one of its parameters`,
      suggestHint(c.id_param, names),
    );
  }
  if ((c.kind === 'get' || c.kind === 'update' || c.kind === 'delete') && c.id_param === undefined) {
    fail(
      `${at}/kind`,
      'bad_capability',
      `${c.kind} capability \`${c.name}\` has no id parameter`,
      'add a parameter named like the entity id field, or say which one with `id_param:`',
    );
  }
  if (c.kind === 'get' && c.returns !== 'row')
    fail(
      `${at}/returns`,
      'bad_capability',
      `get capability \`${c.name}\` must return one row`,
      'remove `returns` or write `returns: row`',
    );
  if ((c.kind === 'query' || c.kind === 'search') && c.returns !== 'rows')
    fail(
      `${at}/returns`,
      'bad_capability',
      `${c.kind} capability \`${c.name}\` must return rows`,
      'remove `returns` or write `returns: rows`',
    );
  if (c.kind === 'search' && !c.params.some((p) => p.required && p.type === 'string')) {
    fail(
      `${at}/params`,
      'bad_capability',
      `search capability \`${c.name}\` has no required string parameter for the search text`,
      'add for example `q: {type: string, required: true}`',
    );
  }
}

function checkMapping(c: Capability, at: string, droppedParam: (n: string) => boolean, fail: Fail): void {
  const h = c.http;
  const hat = `${at}/http`;
  const declared = new Map(c.params.map((p) => [p.name, p]));
  const names = [...declared.keys()];
  const path = parseTemplate(h.path);
  if (path.error)
    fail(`${hat}/path`, 'bad_mapping', `path template of \`${c.name}\`: ${path.error}`, 'write parameters as `{name}`');
  for (const v of path.params) {
    const p = declared.get(v);
    if (!p && !droppedParam(v))
      fail(
        `${hat}/path`,
        'path_parameter_undeclared',
        `path variable \`{${v}}\` of \`${c.name}\` is not a declared parameter`,
        `declare \`${v}\` under \`capabilities.${c.name}.params\` (${suggestHint(v, names)})`,
      );
    else if (p && !p.required)
      fail(
        `${hat}/path`,
        'path_parameter_optional',
        `path variable \`{${v}}\` of \`${c.name}\` is an optional parameter`,
        'path parameters are always sent: remove `required: false`',
      );
  }
  const used = new Set(path.params);
  const templates: Array<[string, string]> = [
    ...Object.values(h.query).map((t): [string, string] => [`${hat}/query`, t]),
    ...Object.values(h.headers).map((t): [string, string] => [`${hat}/headers`, t]),
  ];
  for (const [where, t] of templates) {
    const parsed = parseTemplate(t);
    if (parsed.error)
      fail(
        where,
        'bad_mapping',
        `template \`${t}\` of \`${c.name}\`: ${parsed.error}`,
        'write parameters as `{name}` and literal braces as `{{` `}}`',
      );
    for (const v of parsed.params) {
      used.add(v);
      if (!declared.has(v) && !droppedParam(v))
        fail(
          where,
          'unknown_parameter',
          `template \`${t}\` of \`${c.name}\` refers to undeclared parameter \`${v}\``,
          suggestHint(v, names),
        );
    }
  }
  for (const v of h.body !== undefined ? jsonTemplateParams(h.body) : []) {
    used.add(v);
    if (!declared.has(v) && !droppedParam(v))
      fail(
        `${hat}/body`,
        'unknown_parameter',
        `body of \`${c.name}\` refers to undeclared parameter \`${v}\``,
        suggestHint(v, names),
      );
  }
  for (const p of c.params) {
    if (!used.has(p.name))
      fail(
        `${hat}`,
        'unmapped_parameter',
        `parameter \`${p.name}\` of \`${c.name}\` is sent nowhere`,
        `add \`${p.name}: "{${p.name}}"\` to the mapping's query or body, or leave query/body out to place parameters automatically`,
      );
  }
  const pg = h.pagination;
  if (pg) {
    if (c.returns !== 'rows')
      fail(
        `${hat}/pagination`,
        'bad_mapping',
        `\`${c.name}\` returns ${c.returns} but declares pagination`,
        'only capabilities that return rows are paginated',
      );
    const need: Record<string, string[]> = {
      page: ['page_param'],
      offset: ['offset_param', 'size_param'],
      cursor: ['cursor_param', 'next_cursor'],
      link: [],
    };
    for (const k of need[pg.style] ?? []) {
      if ((pg as unknown as Record<string, unknown>)[k] === undefined)
        fail(
          `${hat}/pagination`,
          'bad_mapping',
          `${pg.style} pagination of \`${c.name}\` needs \`${k}\``,
          `add \`${k}:\` (the vendor's query parameter name) to pagination`,
        );
    }
    if (pg.max_page_size < pg.page_size)
      fail(
        `${hat}/pagination`,
        'bad_mapping',
        `page_size ${pg.page_size} of \`${c.name}\` exceeds max_page_size ${pg.max_page_size}`,
        'lower page_size or raise max_page_size',
      );
    const own = ['page_param', 'offset_param', 'cursor_param', 'size_param']
      .map((k) => (pg as unknown as Record<string, string | undefined>)[k])
      .filter((x): x is string => !!x);
    for (const q of own)
      if (q in h.query)
        fail(
          `${hat}/pagination`,
          'bad_mapping',
          `\`${q}\` of \`${c.name}\` is both a pagination parameter and a mapped query key`,
          'let pagination own its query parameters',
        );
  }
}

/**
 * Capabilities from operations, by method and path shape: `GET /xs` a query, `GET /xs/{id}` a
 * get, a GET of one object without an id at the end of its path (`GET /user`) a singleton get,
 * a GET whose answer is no row (text, a JSON map or scalar, no schema) a singleton get of one value
 * (value-answers.ts), `POST /xs` a create, `PUT`/`PATCH /xs/{id}` an update, `DELETE /xs/{id}` a delete; other
 * operations are actions (or queries, for a read-only POST search returning rows) on the entity
 * of the nearest enclosing resource path.
 */
import { type EntityTable, lastLiteral } from './entities.js';
import { bodyWrapper, rowResult, type RowResult } from './envelopes.js';
import type {
  CapabilityKind,
  ImportCapability,
  ImportEntity,
  ImportLog,
  ImportParam,
  ImportType,
  Skipped,
} from './model.js';
import { fieldNamedBy, idParamName } from './ids.js';
import { meaningOf } from './meaning.js';
import { NameSet, camelName, pascalName, singular } from './names.js';
import type { Operation } from './operations.js';
import { detectPaging } from './pagination.js';
import { buildParams, paramName } from './params.js';
import { objectShape, strip, toType, type Schema } from './schema.js';
import { valueAnswer, valueEntity, type ValueRead } from './value-answers.js';

/** `/breweries/{id}/beers` -> `/breweries/{}/beers`: the shape of a path. */
export const shapeOf = (path: string) => path.replace(/\{[^}]*\}/g, '{}').replace(/\/+$/, '');

const endsWithParam = (path: string) => /\}\/?$/.test(path);
const lastParam = (path: string) => /\{([^}]*)\}\/?$/.exec(path)?.[1];

interface Read {
  op: Operation;
  rr: RowResult;
  entity: ImportEntity;
}

/** Entities from the reads, and which path shape belongs to which entity. */
export function findReads(
  ops: Operation[],
  table: EntityTable,
): { reads: Map<Operation, Read>; shapes: Map<string, ImportEntity> } {
  const reads = new Map<Operation, Read>();
  const shapes = new Map<string, ImportEntity>();
  const gets = ops.filter((op) => op.method === 'get');
  for (const op of gets)
    if (op.response.schema && endsWithParam(op.path) && rowResult(op.response.schema, { one: true })?.returns === 'row')
      table.rowAnswer(op.response.schema, op.path);
  // An answer a get by id reads as one row is one row wherever it is answered (`GET /boxes/latest`).
  const found = gets.flatMap((op) => {
    const one = endsWithParam(op.path) || table.answersRow(op.response.schema, op.path);
    const rr = rowResult(op.response.schema, { one });
    return rr ? [{ op, rr }] : [];
  });
  table.plan(found.map(({ op, rr }) => ({ schema: rr.schema, path: op.path, returns: rr.returns })));
  for (const { op, rr } of found) {
    const entity = table.entityFor(rr.schema, op.path);
    if (!entity) continue;
    reads.set(op, { op, rr, entity });
    const shape = shapeOf(op.path);
    if (rr.returns === 'rows' && !endsWithParam(op.path) && !shapes.has(shape)) shapes.set(shape, entity);
    if (rr.returns === 'row' && endsWithParam(op.path)) {
      if (!shapes.has(shape)) shapes.set(shape, entity);
      const parent = shape.replace(/\/\{\}$/, '');
      if (!shapes.has(parent)) shapes.set(parent, entity);
    }
  }
  return { reads, shapes };
}

/** The entity whose resource path encloses `path` (the path itself first), and that path's shape. */
function enclosing(
  path: string,
  shapes: Map<string, ImportEntity>,
): { entity: ImportEntity; shape: string } | undefined {
  let shape = shapeOf(path);
  while (shape) {
    const entity = shapes.get(shape);
    if (entity) return { entity, shape };
    shape = shape.slice(0, shape.lastIndexOf('/'));
  }
  return undefined;
}

/**
 * The path parameter of a row of `entity` that `path` lies below (`/repos/{o}/{r}/issues/{n}/sub_issues`
 * lists issues below issue `n`): the operation then acts on that row. Longest prefix first.
 */
function rowOf(path: string, entity: ImportEntity, shapes: Map<string, ImportEntity>): string | undefined {
  const segs = path.replace(/\/+$/, '').split('/');
  for (let n = segs.length - 1; n > 1; n--) {
    const prefix = segs.slice(0, n).join('/');
    if (endsWithParam(prefix) && shapes.get(shapeOf(prefix)) === entity) return lastParam(prefix);
  }
  return undefined;
}

const NO_ENTITY: Skip = {
  reason: 'no_entity',
  why: 'no entity: it is below no listed or fetched resource, answers no JSON row, names no resource by a `{param}` of its path and writes no request body with properties',
};

type Skip = Pick<Skipped, 'reason' | 'why'>;

interface Shape {
  kind: CapabilityKind;
  entity: ImportEntity;
  returns: 'rows' | 'row' | 'none';
  rr?: RowResult;
  /** Wire name of the path parameter holding the entity's id. */
  own?: string;
  /** A get of the one row its path answers (`GET /user`): no id, its path parameters are ordinary. */
  singleton?: true;
  /** A value answer (value-answers.ts): the field holding it, and the `Accept` sent for it. */
  value?: { field: string; accept?: string };
}

function classify(
  op: Operation,
  read: Read | undefined,
  table: EntityTable,
  shapes: Map<string, ImportEntity>,
): Shape | Skip {
  // A GET that reads no rows is a value answer (buildCapabilities), never here.
  if (op.method === 'get' && read) {
    if (read.rr.returns === 'rows') {
      const own = rowOf(op.path, read.entity, shapes);
      return { kind: 'query', entity: read.entity, returns: 'rows', rr: read.rr, ...(own ? { own } : {}) };
    }
    if (!endsWithParam(op.path))
      return { kind: 'get', entity: read.entity, returns: 'row', rr: read.rr, singleton: true };
    return { kind: 'get', entity: read.entity, returns: 'row', rr: read.rr, own: lastParam(op.path) };
  }
  const rr = rowResult(op.response.schema, { one: endsWithParam(op.path) || table.answersRow(op.response.schema) });
  const responseEntity = rr ? table.known(rr.schema) : undefined;
  const at = enclosing(op.path, shapes);
  // A POST whose name says it only reads, answering rows, is a query (of a new entity if need be).
  if (op.method === 'post' && rr?.returns === 'rows' && readsByName(actionName(op) ?? '')) {
    const rows = responseEntity ?? adopt(table, rr.schema, op, 'the rows');
    if (rows) return { kind: 'query', entity: rows, returns: 'rows', rr };
  }
  const entity = at?.entity ?? responseEntity;
  if (!entity) return detached(op, rr, table);
  const exact = at !== undefined && at.shape === shapeOf(op.path);
  const returns = responseEntity === entity && rr?.returns === 'row' ? 'row' : 'none';
  // A write answering its row (wrapped or not) reads it where it is; one answering nothing reads nothing.
  const answer = returns === 'row' && rr ? { rr } : {};
  const itemOwn =
    at && at.shape.endsWith('{}')
      ? lastParam(op.path.split('/').slice(0, at.shape.split('/').length).join('/'))
      : undefined;
  const own = itemOwn ?? rowOf(op.path, entity, shapes);
  if (op.method === 'post' && exact && !endsWithParam(op.path))
    return { kind: 'create', entity, returns, ...answer, ...(own ? { own } : {}) };
  if ((op.method === 'put' || op.method === 'patch') && exact && endsWithParam(op.path))
    return { kind: 'update', entity, returns, ...answer, own: lastParam(op.path) };
  if (op.method === 'put' && exact && op.body && entity.id && bodyHas(op, entity.id))
    return { kind: 'update', entity, returns, ...answer };
  if (op.method === 'delete' && exact && endsWithParam(op.path))
    return { kind: 'delete', entity, returns: 'none', own: lastParam(op.path) };
  return { kind: 'action', entity, returns, ...answer, ...(own ? { own } : {}) };
}

/**
 * The name an operation gives itself: the last word of its fragment (`/#X-Amz-Target=Kms.ListKeys`
 * -> `ListKeys`, the RPC convention of one path for every call), else its path's last literal.
 */
export function actionName(op: Operation): string | undefined {
  const f = op.fixed?.fragment;
  const word = f?.includes('=') ? /([A-Za-z][\w-]*)$/.exec(f.slice(f.indexOf('=') + 1))?.[1] : undefined;
  return word ?? lastLiteral(op.path);
}

const wordsOf = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w);

/** Words that make a `get...`/`describe...` name a write (`getOrCreateKey`, `getAndResetToken`). */
const WRITE_WORDS = new Set(
  'create update delete put set add remove insert upsert generate reset rotate start stop run send cancel or and new'.split(
    ' ',
  ),
);

/**
 * Whether an operation's name says it only reads: `search`, `query`, `find` or `list` in it
 * (`/pets/findByStatus`, `ListKeys`), or a first word `get` or `describe` and no word of a write
 * (`DescribeInstances`, `getUsers`; not `getOrCreateKey`).
 */
export function readsByName(name: string): boolean {
  if (/search|query|find|list/i.test(name)) return true;
  const words = wordsOf(name);
  return (words[0] === 'get' || words[0] === 'describe') && !words.some((w) => WRITE_WORDS.has(w));
}

/**
 * The entity of a row schema that no read returns (a write's answer, a POST query's rows, a
 * request body), created on first sight: an inline schema is named from the operation, its id
 * settled like a read's (`id`, else `<entity>Id`, else a field named `...Id`/`..._id`, else the
 * first field), and the report says where it came from.
 */
function adopt(table: EntityTable, schema: Schema, op: Operation, what: string): ImportEntity | undefined {
  const before = table.list.length;
  const entity = table.entityFor(schema, op.path, pascalName(singular(actionName(op) ?? 'item')));
  // An entity read only by singleton gets has rows without identity: a write's row needs one.
  if (!entity || table.list.length === before) return entity?.id ? entity : undefined;
  entity.source = `${entity.source.startsWith('#') ? entity.source : 'inline schema'}: ${what} of \`${op.label}\` (no read returns it)`;
  const fields = [...entity.fields.keys()];
  const own = entity.name.toLowerCase();
  entity.id =
    fields.find((f) => f === 'id') ??
    fields.find((f) => [`${own}id`, `${own}_id`].includes(f.toLowerCase())) ??
    fields.find((f) => /(^|_)id$|[a-z0-9]I[dD]$/.test(f)) ??
    fields[0]!;
  return entity;
}

/**
 * A write below no read resource, whose entity the document does not give by a read: (a) the
 * entity of its answer when that is a JSON row or rows; else (b) the resource its path names,
 * the literal before its last `{param}` (`.../databases/{databaseName}/failover` -> Database, id
 * `databaseName`), on whose row it acts; else (c) the entity of its request body (the thing it
 * writes). Kinds follow the method and path rules (a `PUT /xs/{x}` updates, a `DELETE /xs/{x}`
 * deletes, a `POST /xs` answering an X creates); everything else is an action.
 */
function detached(op: Operation, rr: RowResult | undefined, table: EntityTable): Shape | Skip {
  const segs = op.path.replace(/\/+$/, '').split('/');
  const at = resourceAt(segs);
  const last = at > 0 ? segs[at]!.slice(1, -1) : undefined;
  const literal = at > 0 ? segs[at - 1] : undefined;
  const named = literal ? pascalName(singular(literal.replace(/\.\w+$/, ''))) : undefined;
  const onRow = at === segs.length - 1;
  const answer = rr
    ? adopt(table, rr.schema, op, rr.returns === 'rows' ? 'the rows answered' : 'the answer')
    : undefined;
  if (answer && rr) {
    const ownsPath = onRow && named === answer.name;
    const own = ownsPath ? last : undefined;
    if (rr.returns === 'row' && op.method === 'post' && !op.fixed && !endsWithParam(op.path) && lastLiteral(op.path))
      if (pascalName(singular(lastLiteral(op.path)!)) === answer.name)
        return { kind: 'create', entity: answer, returns: 'row', rr };
    if (own && rr.returns === 'row' && (op.method === 'put' || op.method === 'patch'))
      return { kind: 'update', entity: answer, returns: 'row', rr, own };
    if (own && op.method === 'delete') return { kind: 'delete', entity: answer, returns: 'none', own };
    return { kind: 'action', entity: answer, returns: rr.returns, rr, ...(own ? { own } : {}) };
  }
  if (named && last !== undefined) {
    const p = op.params.find((x) => x.in === 'path' && x.name === last);
    const type: ImportType = (p && toType(p.schema)) ?? { type: 'string' };
    const prefix = segs.slice(0, at + 1).join('/');
    const entity = table.forPath(
      named,
      paramName(last),
      strip(type),
      `the path \`${prefix}\` of \`${op.label}\` (no read returns it: its id is the path parameter)`,
    );
    if (onRow && (op.method === 'put' || op.method === 'patch'))
      return { kind: 'update', entity, returns: 'none', own: last };
    if (onRow && op.method === 'delete') return { kind: 'delete', entity, returns: 'none', own: last };
    return { kind: 'action', entity, returns: 'none', own: last };
  }
  const body = op.body ? requestRow(op.body.schema) : undefined;
  const written = body ? adopt(table, body, op, 'the request body') : undefined;
  if (written) return { kind: 'action', entity: written, returns: 'none' };
  return NO_ENTITY;
}

/**
 * The index of the path segment holding the id of the resource a path names: the last `{param}`
 * right after a literal and not followed by another `{param}` (`/agents/{agentNum}/reload`,
 * `/databases/{databaseName}`; in `/set/{port}/{protocol}` the values are arguments); -1 if none.
 */
function resourceAt(segs: string[]): number {
  const param = (s: string | undefined) => s !== undefined && /^\{[^}]+\}$/.test(s);
  for (let i = segs.length - 1; i > 1; i--)
    if (param(segs[i]) && segs[i - 1] && !param(segs[i - 1]) && !param(segs[i + 1])) return i;
  return -1;
}

/** The object a request body writes (inside its wrapper), when it has properties. */
function requestRow(schema: Schema): Schema | undefined {
  const wrapper = bodyWrapper(schema);
  const inner = wrapper ? objectShape(schema).props.get(wrapper)! : schema;
  return objectShape(inner).props.size > 0 ? inner : undefined;
}

/** Whether the request body (inside its wrapper, if it has one) has the property `field`. */
function bodyHas(op: Operation, field: string): boolean {
  if (!op.body) return false;
  const wrapper = bodyWrapper(op.body.schema);
  const props = objectShape(op.body.schema).props;
  const inner = wrapper ? objectShape(props.get(wrapper)!).props : props;
  return inner.has(field);
}

/**
 * Capability name: the operationId in camelCase, else method and path words, then the values the
 * path key fixes (`POST /items?action=archive` -> postItemsArchive) or its fragment's name.
 */
function baseName(op: Operation): string {
  if (op.operationId) return camelName(op.operationId);
  const words = op.path.split('/').filter((s) => s && !s.startsWith('{'));
  const fixed = op.fixed ? [...Object.values(op.fixed.query), ...(op.fixed.fragment ? [actionName(op)!] : [])] : [];
  return op.method + [...words, ...fixed].map((w) => pascalName(w)).join('');
}

/** Every capability that can be mapped; the rest is logged as skipped. */
export function buildCapabilities(ops: Operation[], table: EntityTable, log: ImportLog): ImportCapability[] {
  const { reads, shapes } = findReads(ops, table);
  settleIds(ops, reads);
  const names = new NameSet();
  const out: ImportCapability[] = [];
  const values: Array<{ op: Operation; answer: ValueRead; name: string }> = [];
  for (const op of ops) {
    const read = reads.get(op);
    if (op.method === 'get' && !read) {
      const answer = valueAnswer(op);
      if ('files' in answer)
        log.skipped.push({
          what: op.label,
          reason: 'file_answer',
          why: `the answer is a file (${answer.files.join(', ')}): svc reads text and JSON only`,
        });
      else values.push({ op, answer, name: names.take(baseName(op)) });
      continue;
    }
    const shape = classify(op, read, table, shapes);
    if ('reason' in shape) {
      log.skipped.push({ what: op.label, ...shape });
      continue;
    }
    const cap = capability(op, shape, log);
    if (!cap) continue;
    cap.name = names.take(baseName(op));
    out.push(cap);
  }
  // After every other entity, so that one the document names `Text` or `Value` keeps its name.
  for (const { op, answer, name } of values) {
    const { entity, field } = valueEntity(table, answer.kind);
    const value = { field, ...(answer.accept ? { accept: answer.accept } : {}) };
    const cap = capability(op, { kind: 'get', entity, returns: 'row', singleton: true, value }, log);
    if (!cap) continue;
    cap.name = name;
    out.push(cap);
  }
  return out;
}

/**
 * The id field of each entity: the field the path parameter of its first get that names one
 * names (the parameter itself, or what is left of it after words of the entity's name:
 * `issue_number` -> Issue.number), else `id`, else the first scalar field (an object or a list
 * cannot go into a URL path), else the first field.
 */
function settleIds(ops: Operation[], reads: Map<Operation, Read>): void {
  const gets = ops.flatMap((op) => {
    const r = reads.get(op);
    const p = r && r.rr.returns === 'row' ? lastParam(op.path) : undefined;
    return r && p ? [{ e: r.entity, p }] : [];
  });
  // A get whose parameter names a field wins over an earlier one that names none (by tag, then by id).
  for (const { e, p } of gets) if (!e.id) e.id = fieldNamedBy(p, e) ?? '';
  for (const { e } of gets) if (!e.id) e.id = e.fields.has('id') ? 'id' : '';
  // An entity read only by singleton gets (`GET /rate_limit`) keeps no id unless it has `id`:
  // its rows have no identity (docs/authoring.md, Singleton gets). Any other takes its first field
  // that is not an object or a list (an object cannot go into a URL path), else its first field.
  for (const r of reads.values()) if (!r.entity.id && r.entity.fields.has('id')) r.entity.id = 'id';
  const scalar = (e: ImportEntity) => [...e.fields].find(([, t]) => t.type !== 'object' && t.type !== 'array')?.[0];
  for (const r of reads.values())
    if (!r.entity.id && !isSingleton(r)) r.entity.id = scalar(r.entity) ?? [...r.entity.fields.keys()][0]!;
}

/** A read of one row at a path that does not end with a parameter. */
function isSingleton(r: Read): boolean {
  return r.rr.returns === 'row' && !endsWithParam(r.op.path);
}

/**
 * Whether the mapping sends query lists comma-joined: when every `many` parameter is one the
 * document sends so (`explode: false`). A mapping has one `array_style`, so when both kinds are
 * present the lists repeat and each comma-joined one says so for the report.
 */
function commaLists(params: ImportParam[]): boolean {
  const lists = params.filter((p) => p.many);
  const comma = lists.filter((p) => p.list === 'comma');
  if (comma.length > 0 && comma.length === lists.length) return true;
  for (const p of comma)
    (p.left ??= []).push(
      'explode: false (comma-joined), but sent as repeated keys: the mapping has one array_style and its other lists repeat',
    );
  return false;
}

function capability(op: Operation, s: Shape, log: ImportLog): ImportCapability | undefined {
  const fields = new Set(
    [...s.entity.fields].filter(([, t]) => t.type !== 'array' && t.type !== 'object').map(([k]) => k),
  );
  const paging =
    s.kind === 'query' && s.rr
      ? detectPaging(op.params, op.response.headers, op.response.schema, s.rr.totalPath, fields, s.entity.id)
      : undefined;
  const keep = s.kind === 'update' && s.own === undefined ? s.entity.id : undefined;
  const ownName = s.own === undefined ? undefined : idParamName(s.own, s.entity);
  const built = buildParams(op, paging?.owned ?? new Set(), s.own, ownName ?? s.entity.id, keep);
  if (built.problem) {
    log.skipped.push({ what: op.label, ...built.problem });
    return undefined;
  }
  if (s.rr?.oneOfLists)
    log.review.push({
      what: op.label,
      note: `the response is one of several lists; rows are read as the richest (${s.entity.name}): check which one the vendor sends by default`,
    });
  if (built.dropped.length)
    log.review.push({ what: op.label, note: `parameters left out: ${built.dropped.join(', ')}` });
  for (const f of built.files)
    log.skipped.push({
      what: `${op.label} body part ${f}`,
      reason: 'file_part',
      why: `a file part of the ${op.body!.encoding} body: svc sends text fields only`,
    });
  const params = built.params;
  const idParam = ownName;
  if (s.kind === 'update' && idParam === undefined) {
    const id = params.find((p) => p.name === s.entity.id);
    if (id) {
      id.required = true;
      delete id.default;
    }
  }
  const path = op.path.replace(
    /\{([^}]*)\}/g,
    (_m, wire: string) => `{${params.find((p) => p.in === 'path' && p.wire === wire)?.name ?? wire}}`,
  );
  const meaning = meaningOf(op);
  const comma = commaLists(params);
  const query = { ...op.fixed?.query, ...built.constants.query };
  const accept = s.value ? s.value.accept : op.response.accept;
  // A value answer's declared type wins over an `Accept` parameter's JSON value: the answer is text.
  const headers = s.value?.accept
    ? { ...built.constants.headers, Accept: s.value.accept }
    : { ...(accept ? { Accept: accept } : {}), ...built.constants.headers };
  const constants = {
    ...(Object.keys(query).length ? { query } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
  };
  return {
    name: '',
    ...(comma ? { array_style: 'comma' as const } : {}),
    ...(op.body && op.body.encoding !== 'json' ? { body_encoding: op.body.encoding } : {}),
    kind: s.kind,
    ...(s.singleton ? { singleton: true as const } : {}),
    entity: s.entity.name,
    description: meaning.text,
    returns: s.returns,
    ...(idParam !== undefined && params.some((p) => p.name === idParam) ? { id_param: idParam } : {}),
    params,
    method: op.method.toUpperCase() as ImportCapability['method'],
    path,
    ...(paging?.pagination ? { pagination: paging.pagination } : {}),
    ...(paging?.sort ? { sort: paging.sort } : {}),
    response: {
      path: s.rr?.path ?? '',
      ...(paging?.total ? { total: paging.total } : {}),
      ...(s.value ? { value: s.value.field } : {}),
    },
    ...(built.bodyWrapper ? { body_wrapper: built.bodyWrapper } : {}),
    ...(built.bodyRequired ? { body_required: true as const } : {}),
    ...(Object.keys(constants).length ? { constants } : {}),
    origin: op.label,
    meaning_from: meaning.from,
  };
}

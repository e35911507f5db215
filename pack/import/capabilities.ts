/**
 * Capabilities from operations, by method and path shape: `GET /xs` a query, `GET /xs/{id}` a
 * get, `POST /xs` a create, `PUT`/`PATCH /xs/{id}` an update, `DELETE /xs/{id}` a delete; other
 * operations are actions (or queries, for a read-only POST search returning rows) on the entity
 * of the nearest enclosing resource path.
 */
import { type EntityTable, lastLiteral, rowResult, type RowResult } from './entities.js';
import type { CapabilityKind, ImportCapability, ImportEntity, ImportLog } from './model.js';
import { NameSet, camelName, oneLine, pascalName } from './names.js';
import type { Operation } from './operations.js';
import { detectPaging } from './pagination.js';
import { buildParams, paramName } from './params.js';

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
  for (const op of ops) {
    if (op.method !== 'get') continue;
    const rr = rowResult(op.response.schema);
    const entity = rr && table.entityFor(rr.schema, op.path);
    if (!rr || !entity) continue;
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

interface Shape {
  kind: CapabilityKind;
  entity: ImportEntity;
  returns: 'rows' | 'row' | 'none';
  rr?: RowResult;
  /** Wire name of the path parameter holding the entity's id. */
  own?: string;
}

function classify(
  op: Operation,
  read: Read | undefined,
  table: EntityTable,
  shapes: Map<string, ImportEntity>,
): Shape | string {
  if (op.method === 'get') {
    if (!read) return 'the response is not a JSON object or a list of objects with named properties';
    if (read.rr.returns === 'rows') return { kind: 'query', entity: read.entity, returns: 'rows', rr: read.rr };
    if (!endsWithParam(op.path)) return 'a GET of one object without an id in the path (a singleton) has no get form';
    return { kind: 'get', entity: read.entity, returns: 'row', rr: read.rr, own: lastParam(op.path) };
  }
  const rr = rowResult(op.response.schema);
  const responseEntity = rr ? table.known(rr.schema) : undefined;
  const at = enclosing(op.path, shapes);
  const entity = at?.entity ?? responseEntity;
  if (!entity) return 'no entity: neither its path nor its response belongs to a listed or fetched resource';
  const exact = at !== undefined && at.shape === shapeOf(op.path);
  const returns = responseEntity === entity && rr?.returns === 'row' ? 'row' : 'none';
  const itemOwn =
    at && at.shape.endsWith('{}')
      ? lastParam(op.path.split('/').slice(0, at.shape.split('/').length).join('/'))
      : undefined;
  if (
    op.method === 'post' &&
    rr?.returns === 'rows' &&
    responseEntity &&
    /search|query|find|list/i.test(lastLiteral(op.path) ?? '')
  )
    return { kind: 'query', entity: responseEntity, returns: 'rows', rr };
  if (op.method === 'post' && exact && !endsWithParam(op.path)) return { kind: 'create', entity, returns };
  if ((op.method === 'put' || op.method === 'patch') && exact && endsWithParam(op.path))
    return { kind: 'update', entity, returns, own: lastParam(op.path) };
  if (op.method === 'put' && exact && op.body && entity.id && bodyHas(op, entity.id))
    return { kind: 'update', entity, returns };
  if (op.method === 'delete' && exact && endsWithParam(op.path))
    return { kind: 'delete', entity, returns: 'none', own: lastParam(op.path) };
  return { kind: 'action', entity, returns, ...(itemOwn ? { own: itemOwn } : {}) };
}

const bodyHas = (op: Operation, field: string) =>
  op.body !== undefined && Object.prototype.hasOwnProperty.call(op.body.schema.properties ?? {}, field);

/** Capability name: the operationId in camelCase, else method and path words. */
function baseName(op: Operation): string {
  if (op.operationId) return camelName(op.operationId);
  const words = op.path.split('/').filter((s) => s && !s.startsWith('{'));
  return op.method + words.map((w) => pascalName(w)).join('');
}

/** Every capability that can be mapped; the rest is logged as skipped. */
export function buildCapabilities(ops: Operation[], table: EntityTable, log: ImportLog): ImportCapability[] {
  const { reads, shapes } = findReads(ops, table);
  settleIds(ops, reads);
  const names = new NameSet();
  const out: ImportCapability[] = [];
  for (const op of ops) {
    const shape = classify(op, reads.get(op), table, shapes);
    if (typeof shape === 'string') {
      log.skipped.push({ what: op.label, why: shape });
      continue;
    }
    const cap = capability(op, shape, log);
    if (!cap) continue;
    cap.name = names.take(baseName(op));
    out.push(cap);
  }
  return out;
}

/** The id field of each entity: the field named by its first get's path parameter, else `id`, else the first field. */
function settleIds(ops: Operation[], reads: Map<Operation, Read>): void {
  for (const op of ops) {
    const r = reads.get(op);
    const p = r && r.rr.returns === 'row' ? lastParam(op.path) : undefined;
    if (!r || !p || r.entity.id) continue;
    r.entity.id = r.entity.fields.has(p) ? p : r.entity.fields.has('id') ? 'id' : '';
  }
  for (const r of reads.values())
    if (!r.entity.id) r.entity.id = r.entity.fields.has('id') ? 'id' : [...r.entity.fields.keys()][0]!;
}

/**
 * The parameter name of the path parameter holding a row's id: the entity's id field when the
 * wire name says so (`id`, `petId` for Pet, the field itself), else the wire name (`username`).
 */
function idParamName(wire: string, e: ImportEntity): string {
  const w = wire.toLowerCase();
  const n = e.name.toLowerCase();
  return wire === e.id || w === 'id' || w === `${n}id` || w === `${n}_id` ? e.id : paramName(wire);
}

function capability(op: Operation, s: Shape, log: ImportLog): ImportCapability | undefined {
  const fields = new Set(
    [...s.entity.fields].filter(([, t]) => t.type !== 'array' && t.type !== 'object').map(([k]) => k),
  );
  const paging =
    s.kind === 'query' && s.rr
      ? detectPaging(op.params, op.response.headers, op.response.schema, s.rr.totalPath, fields)
      : undefined;
  const keep = s.kind === 'update' && s.own === undefined ? s.entity.id : undefined;
  const ownName = s.own === undefined ? undefined : idParamName(s.own, s.entity);
  const built = buildParams(op, paging?.owned ?? new Set(), s.own, ownName ?? s.entity.id, keep);
  if (built.problem) {
    log.skipped.push({ what: op.label, why: built.problem });
    return undefined;
  }
  if (built.dropped.length)
    log.review.push({ what: op.label, note: `parameters left out: ${built.dropped.join(', ')}` });
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
  const description = oneLine(op.summary) || oneLine(op.description);
  return {
    name: '',
    kind: s.kind,
    entity: s.entity.name,
    description,
    returns: s.returns,
    ...(idParam !== undefined && params.some((p) => p.name === idParam) ? { id_param: idParam } : {}),
    params,
    method: op.method.toUpperCase() as ImportCapability['method'],
    path,
    ...(paging?.pagination ? { pagination: paging.pagination } : {}),
    ...(paging?.sort ? { sort: paging.sort } : {}),
    response: { path: s.rr?.path ?? '', ...(paging?.total ? { total: paging.total } : {}) },
    origin: op.label,
  };
}

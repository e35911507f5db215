/**
 * The imported catalog as authoring YAML: catalog.yaml, entities.yaml, capabilities.yaml and
 * mappings.yaml, block style (lists of plain values in flow style), keys in a fixed order, so the
 * same model always gives byte-identical files. The terse rules of docs/authoring.md are used
 * where they hold: parameters named like a field of the same type inherit it, and query/body
 * maps are written only when a wire name differs or the method would place them elsewhere.
 */
import { Document, isScalar, visit } from 'yaml';
import { CONSTRAINT_KEYS } from '../cgs.js';
import type { ImportCapability, ImportCatalog, ImportEntity, ImportParam, ImportType } from './model.js';

const HEADER = '# Imported from an OpenAPI document by `svc import openapi`: see import-report.md.\n';

function typeValue(t: ImportType): unknown {
  const { description, ...rest } = t;
  if (Object.keys(rest).length === 1 && !description && t.type !== 'object') return t.type;
  const out: Record<string, unknown> = { type: t.type };
  if (t.type === 'enum') out.values = t.values;
  if (t.type === 'ref') out.entity = t.entity;
  if (t.type === 'array') out.items = typeValue(t.items);
  if (description) out.description = description;
  return out;
}

const sameType = (a: ImportType, b: ImportType) => {
  const { description: _a, ...x } = a;
  const { description: _b, ...y } = b;
  return JSON.stringify(x) === JSON.stringify(y);
};

function paramValue(p: ImportParam, entity: ImportEntity): unknown {
  const field = entity.fields.get(p.name);
  const extra: Record<string, unknown> = {};
  if (p.required) extra.required = true;
  if (p.default !== undefined) extra.default = p.default;
  if (p.many) extra.many = true;
  for (const k of CONSTRAINT_KEYS) if (p.constraints?.[k] !== undefined) extra[k] = p.constraints[k];
  if (field && sameType(field, p.type) && (!p.type.description || p.type.description === field.description))
    return Object.keys(extra).length ? extra : null;
  const t = typeValue(p.type);
  const spec: Record<string, unknown> = typeof t === 'string' ? { type: t } : (t as Record<string, unknown>);
  return { ...spec, ...extra };
}

function entityValue(e: ImportEntity): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (e.description) out.description = e.description;
  // An entity read only by singleton gets may have no id (docs/authoring.md, Singleton gets).
  if (e.id) out.id = e.id;
  out.fields = Object.fromEntries([...e.fields].map(([k, t]) => [k, typeValue(t)]));
  if (e.relations.length)
    out.relations = Object.fromEntries(
      e.relations.map((r) => [
        r.name,
        {
          ...(r.description ? { description: r.description } : {}),
          target: r.target,
          cardinality: r.cardinality,
          capability: r.capability,
          bind: r.bind,
        },
      ]),
    );
  return out;
}

function capabilityValue(c: ImportCapability, entity: ImportEntity): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: c.kind, ...(c.singleton ? { singleton: true } : {}), entity: c.entity };
  if (c.description) out.description = c.description;
  const byKind = { query: 'rows', get: 'row', create: 'row', update: 'row', action: 'row', delete: 'none' }[c.kind];
  if (c.returns !== byKind) out.returns = c.returns;
  // get, update, delete and action default to the parameter named like the id field; the others to none.
  const implied = c.kind !== 'query' && c.kind !== 'create' && c.id_param === entity.id;
  if (c.id_param !== undefined && !implied) out.id_param = c.id_param;
  if (c.params.length) out.params = Object.fromEntries(c.params.map((p) => [p.name, paramValue(p, entity)]));
  return out;
}

const templates = (ps: ImportParam[]) => Object.fromEntries(ps.map((p) => [p.wire, `{${p.name}}`]));

/** The body template: each parameter under the keys of the objects it is nested in, inside the wrapper. */
function bodyTemplate(ps: ImportParam[], wrapper: string | undefined): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of ps) {
    let obj = root;
    for (const k of p.at ?? []) obj = (obj[k] ??= {}) as Record<string, unknown>;
    obj[p.wire] = `{${p.name}}`;
  }
  return wrapper ? { [wrapper]: root } : root;
}

/** A constant as a template: its braces doubled, so it is sent as written. */
const literal = (v: string) => v.replace(/\{/g, '{{').replace(/\}/g, '}}');
const literals = (m: Record<string, string> = {}) =>
  Object.fromEntries(Object.entries(m).map(([k, v]) => [k, literal(v)]));

function mappingValue(c: ImportCapability): unknown {
  const out: Record<string, unknown> = { method: c.method, path: c.path };
  const inQuery = c.params.filter((p) => p.in === 'query');
  const inBody = c.params.filter((p) => p.in === 'body');
  const inHeader = c.params.filter((p) => p.in === 'header');
  const readish = c.method === 'GET' || c.method === 'DELETE';
  const renamed = (ps: ImportParam[]) => ps.some((p) => p.wire !== p.name);
  // Constants are written with the parameters of their part: writing `query` stops the terse rule placing them.
  const fixedQuery = Object.keys(c.constants?.query ?? {}).length > 0;
  if (fixedQuery) out.query = { ...literals(c.constants?.query), ...templates(inQuery) };
  else if (inQuery.length && (!readish || renamed(inQuery) || inBody.length)) out.query = templates(inQuery);
  if (inHeader.length || Object.keys(c.constants?.headers ?? {}).length)
    out.headers = { ...literals(c.constants?.headers), ...templates(inHeader) };
  const whole = inBody.find((p) => p.wire === '');
  if (whole) out.body = `{${whole.name}}`;
  else if (c.body_wrapper || inBody.some((p) => p.at)) out.body = bodyTemplate(inBody, c.body_wrapper);
  else if (inBody.length && (readish || renamed(inBody))) out.body = templates(inBody);
  if (c.body_encoding) out.body_encoding = c.body_encoding;
  // A wrapped body's empty form keeps its wrapper (`{"data": {}}`), which the vendor expects.
  if (c.body_required) out.body_required = c.body_wrapper ? { [c.body_wrapper]: {} } : true;
  if (c.array_style) out.array_style = c.array_style;
  if (c.pagination) out.pagination = { ...c.pagination };
  if (c.sort) out.sort = { ...c.sort };
  if (c.response.path || c.response.total || c.response.value)
    out.response = {
      ...(c.response.path ? { path: c.response.path } : {}),
      ...(c.response.total ? { total: c.response.total } : {}),
      ...(c.response.value ? { value: c.response.value } : {}),
    };
  return Object.keys(out).length === 2 ? `${c.method} ${c.path}` : out;
}

function yamlText(value: unknown): string {
  const doc = new Document(value);
  visit(doc, {
    Seq(_key, node) {
      if (node.items.every((i) => isScalar(i))) node.flow = true;
    },
  });
  return HEADER + doc.toString({ lineWidth: 0, minContentWidth: 0, flowCollectionPadding: false });
}

/** File name -> text of the four authoring files. */
export function emitCatalog(c: ImportCatalog): Record<string, string> {
  const entities = new Map(c.entities.map((e) => [e.name, e]));
  return {
    'catalog.yaml': yamlText({
      catalog: {
        entry_id: c.entry_id,
        version: 1,
        label: c.label,
        tags: ['openapi'],
        description: c.description,
        backend: { url: c.base_url },
        auth: c.auth,
      },
    }),
    'entities.yaml': yamlText({ entities: Object.fromEntries(c.entities.map((e) => [e.name, entityValue(e)])) }),
    'capabilities.yaml': yamlText({
      capabilities: Object.fromEntries(
        c.capabilities.map((k) => [k.name, capabilityValue(k, entities.get(k.entity)!)]),
      ),
    }),
    'mappings.yaml': yamlText({ mappings: Object.fromEntries(c.capabilities.map((k) => [k.name, mappingValue(k)])) }),
  };
}

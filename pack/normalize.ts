/**
 * Authoring source (YAML files, shorthand allowed) -> CGS (normalized, every default explicit).
 * Records where each CGS node came from, so that semantic diagnostics found on the CGS can point
 * at file:line:col of the source.
 */
import type { SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import { suggestHint } from '../common/suggest.js';
import type {
  Capability, CapabilityKind, Cgs, Entity, FieldDef, HttpMapping, HttpMethod, JsonValue, OutboundAuth,
  Pagination, ParamDef, Relation, Returns, TypeSpec,
} from './cgs.js';
import { SVC_CATALOG_FORMAT_VERSION } from './cgs.js';
import { jsonTemplateParams, parseTemplate } from './template.js';
import type { KeyPath, SourceData } from './source.js';

export interface Origin {
  src: SourceData;
  path: KeyPath;
}

export interface Normalized {
  cgs: Cgs;
  /** CGS JSON pointer -> where in the source it was written. */
  origins: Map<string, Origin>;
  /** Problems found while normalizing (duplicates across files, missing mappings, ...). */
  errors: Array<{ error: SvcError; at: string }>;
  /** Names of items dropped because they broke the schema; references to them are not re-reported. */
  poisoned: Set<string>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Items whose subtree broke the schema are dropped before normalizing, at the finest named level
 * (a field, a relation, a parameter, a mapping, a catalog key), so the rest is still checked.
 * Their names are "poisoned": references to them are not reported a second time.
 */
export function pruneInvalid(files: SourceData[], badPaths: Map<SourceData, KeyPath[]>): Set<string> {
  const poisoned = new Set<string>();
  for (const f of files) {
    for (const bad of badPaths.get(f) ?? []) {
      const path = bad.slice(0, pruneDepth(bad));
      let parent: unknown = f.data;
      for (const seg of path.slice(0, -1)) parent = isObj(parent) ? parent[seg as string] : undefined;
      if (isObj(parent)) delete parent[path[path.length - 1] as string];
      poisoned.add(path.join(':'));
    }
  }
  return poisoned;
}

function pruneDepth(p: KeyPath): number {
  const [section, , sub, item] = p;
  if (section === 'entities' && (sub === 'fields' || sub === 'relations') && item !== undefined) return 4;
  if (section === 'capabilities' && sub === 'params' && item !== undefined) return typeof item === 'number' ? 3 : 4;
  return Math.max(1, Math.min(p.length, 2));
}

/** Whether a name was dropped for a schema error (or its whole section was). */
export function isPoisoned(poisoned: ReadonlySet<string>, ...path: string[]): boolean {
  for (let i = 1; i <= path.length; i++) if (poisoned.has(path.slice(0, i).join(':'))) return true;
  return false;
}

export function normalize(files: SourceData[], poisoned = new Set<string>()): Normalized {
  const n = new Normalizer(poisoned);
  return n.run(files);
}

class Normalizer {
  origins = new Map<string, Origin>();
  errors: Array<{ error: SvcError; at: string }> = [];
  constructor(readonly poisoned: Set<string>) {}

  private mark(at: string, src: SourceData, path: KeyPath): void {
    this.origins.set(at, { src, path });
  }

  private fail(at: string, code: SvcError['code'], message: string, hint?: string): void {
    this.errors.push({ error: svcError(code, message, hint ? { hint } : {}), at });
  }

  run(files: SourceData[]): Normalized {
    const catalogs = files.filter((f) => isObj(f.data.catalog));
    const cgs: Cgs = {
      format_version: SVC_CATALOG_FORMAT_VERSION,
      entry_id: '', version: 0, label: '', tags: [], description: '',
      backend: { base_url: '' }, auth: { scheme: 'none' }, entities: [], capabilities: [],
    };
    if (catalogs.length === 0 && !isPoisoned(this.poisoned, 'catalog')) {
      this.fail('', 'missing_catalog_metadata', 'no source file has a `catalog:` section', 'add catalog.yaml with entry_id, version, label, description and backend.url');
      this.poisoned.add('catalog'); // the header checks would only repeat this problem
    }
    for (const extra of catalogs.slice(1)) {
      this.mark('/#dup-catalog', extra, ['catalog']);
      this.fail('/#dup-catalog', 'duplicate_name', `\`catalog\` is declared again (first in ${catalogs[0]!.file})`, 'keep the catalog metadata in one file');
    }
    if (catalogs[0]) this.catalog(cgs, catalogs[0]);
    this.mark('', files[0]!, []);

    const entitySrc = new Map<string, Obj>();
    for (const f of files) {
      for (const [name, raw] of Object.entries(isObj(f.data.entities) ? f.data.entities : {})) {
        const at = `/entities/${cgs.entities.length}`;
        this.mark(at, f, ['entities', name]);
        if (!entitySrc.has(name)) entitySrc.set(name, raw as Obj);
        cgs.entities.push(this.entity(name, raw as Obj, f, at));
      }
    }
    const mappings = this.collectMappings(files);
    for (const f of files) {
      for (const [name, raw] of Object.entries(isObj(f.data.capabilities) ? f.data.capabilities : {})) {
        const at = `/capabilities/${cgs.capabilities.length}`;
        this.mark(at, f, ['capabilities', name]);
        const entity = cgs.entities.find((e) => e.name === (raw as Obj).entity);
        cgs.capabilities.push(this.capability(name, raw as Obj, entity, mappings.get(name), f, at));
      }
    }
    for (const [name, m] of mappings) {
      if (!cgs.capabilities.some((c) => c.name === name) && !isPoisoned(this.poisoned, 'capabilities', name)) {
        const at = `/#mapping/${name}`;
        this.mark(at, m.src, ['mappings', name]);
        this.fail(at, 'orphan_mapping', `mapping \`${name}\` names no capability`, suggestHint(name, cgs.capabilities.map((c) => c.name)));
      }
    }
    return { cgs, origins: this.origins, errors: this.errors, poisoned: this.poisoned };
  }

  private catalog(cgs: Cgs, f: SourceData): void {
    const c = f.data.catalog as Obj;
    for (const k of ['entry_id', 'version', 'label', 'tags', 'description', 'backend', 'auth']) this.mark(`/${k}`, f, ['catalog', k]);
    this.mark('/backend/base_url', f, ['catalog', 'backend', 'url']);
    cgs.entry_id = String(c.entry_id ?? '');
    cgs.version = c.version as number;
    cgs.label = String(c.label ?? '');
    cgs.tags = Array.isArray(c.tags) ? c.tags.map(String) : [];
    cgs.description = String(c.description ?? '');
    const url = isObj(c.backend) ? String(c.backend.url ?? '') : '';
    cgs.backend = { base_url: url.replace(/([^/])\/+$/, '$1') };
    cgs.auth = normalizeAuth(isObj(c.auth) ? c.auth : { scheme: 'none' });
  }

  private entity(name: string, raw: Obj, f: SourceData, at: string): Entity {
    const base: KeyPath = ['entities', name];
    this.mark(`${at}/id_field`, f, [...base, raw.id === undefined ? 'fields' : 'id']);
    const fields = this.fields(isObj(raw.fields) ? raw.fields : {}, f, [...base, 'fields'], `${at}/fields`);
    const relations: Relation[] = [];
    for (const [rname, r] of Object.entries(isObj(raw.relations) ? raw.relations : {})) {
      const rat = `${at}/relations/${relations.length}`;
      const rsrc: KeyPath = [...base, 'relations', rname];
      this.mark(rat, f, rsrc);
      for (const k of ['target', 'capability', 'bind', 'cardinality']) this.mark(`${rat}/${k}`, f, [...rsrc, k]);
      const rr = r as Obj;
      const bind = isObj(rr.bind) ? (rr.bind as Record<string, string>) : {};
      for (const k of Object.keys(bind)) this.mark(`${rat}/bind/${k}`, f, [...rsrc, 'bind', k]);
      relations.push({
        name: rname,
        description: String(rr.description ?? ''),
        target: String(rr.target),
        cardinality: rr.cardinality as 'one' | 'many',
        capability: String(rr.capability),
        bind: { ...bind },
      });
    }
    return { name, description: String(raw.description ?? ''), id_field: String(raw.id ?? 'id'), fields, relations };
  }

  private fields(raw: Obj, f: SourceData, src: KeyPath, at: string): FieldDef[] {
    return Object.entries(raw).map(([fname, spec], i) => {
      this.mark(`${at}/${i}`, f, [...src, fname]);
      const t = this.typeSpec(spec, f, [...src, fname], `${at}/${i}`);
      const description = isObj(spec) ? String(spec.description ?? '') : '';
      return { name: fname, description, ...t } as FieldDef;
    });
  }

  private typeSpec(spec: unknown, f: SourceData, src: KeyPath, at: string): TypeSpec {
    if (typeof spec === 'string') return { type: spec } as TypeSpec;
    const s = (isObj(spec) ? spec : {}) as Obj;
    const type = String(s.type ?? 'string');
    const out: Obj = { type };
    if (s.values !== undefined) out.values = s.values;
    if (s.entity !== undefined) out.entity = s.entity;
    if (s.items !== undefined) {
      this.mark(`${at}/items`, f, [...src, 'items']);
      out.items = this.typeSpec(s.items, f, [...src, 'items'], `${at}/items`);
    }
    if (s.fields !== undefined || type === 'object') {
      this.mark(`${at}/fields`, f, [...src, 'fields']);
      out.fields = this.fields(isObj(s.fields) ? s.fields : {}, f, [...src, 'fields'], `${at}/fields`);
    }
    return out as TypeSpec;
  }

  private params(raw: unknown, entity: Entity | undefined, f: SourceData, src: KeyPath, at: string): ParamDef[] {
    const entries: Array<[string, unknown]> = Array.isArray(raw) ? raw.map((n) => [String(n), null]) : Object.entries(isObj(raw) ? raw : {});
    return entries.map(([pname, spec], i) => {
      const psrc: KeyPath = Array.isArray(raw) ? [...src, i] : [...src, pname];
      const pat = `${at}/${i}`;
      this.mark(pat, f, psrc);
      const s = isObj(spec) ? spec : {};
      let type: TypeSpec;
      let description = String(s.description ?? '');
      if (typeof spec === 'string' || s.type !== undefined) {
        type = this.typeSpec(spec, f, psrc, pat);
      } else {
        const fieldName = String(s.field ?? pname);
        const field = entity?.fields.find((x) => x.name === fieldName);
        if (field) {
          const { name: _n, description: fd, ...t } = field;
          type = t as TypeSpec;
          if (!description) description = fd;
        } else {
          type = { type: 'string' };
          if (entity && !isPoisoned(this.poisoned, 'entities', entity.name, 'fields', fieldName)) {
            this.fail(pat, 'unknown_field', `parameter \`${pname}\` has no type and entity \`${entity.name}\` has no field \`${fieldName}\` to take it from`, `give it a type, for example \`${pname}: string\`, or name an existing field (${suggestHint(fieldName, entity.fields.map((x) => x.name))})`);
          }
        }
      }
      const p: ParamDef = { name: pname, description, required: s.required === true, ...type } as ParamDef;
      if (s.required !== undefined) this.mark(`${pat}/required`, f, [...psrc, 'required']);
      if (s.default !== undefined) {
        p.default = s.default as JsonValue;
        this.mark(`${pat}/default`, f, [...psrc, 'default']);
      }
      return p;
    });
  }

  private collectMappings(files: SourceData[]): Map<string, { raw: unknown; src: SourceData }> {
    const out = new Map<string, { raw: unknown; src: SourceData }>();
    for (const f of files) {
      for (const [name, raw] of Object.entries(isObj(f.data.mappings) ? f.data.mappings : {})) {
        const prev = out.get(name);
        if (prev) {
          const at = `/#mapping-dup/${name}/${f.file}`;
          this.mark(at, f, ['mappings', name]);
          this.fail(at, 'duplicate_name', `mapping \`${name}\` is declared again (first in ${prev.src.file})`, 'keep one mapping per capability');
          continue;
        }
        out.set(name, { raw, src: f });
      }
    }
    return out;
  }

  private capability(name: string, raw: Obj, entity: Entity | undefined, mapping: { raw: unknown; src: SourceData } | undefined, f: SourceData, at: string): Capability {
    const src: KeyPath = ['capabilities', name];
    for (const k of ['kind', 'entity', 'id_param', 'returns']) this.mark(`${at}/${k}`, f, [...src, k]);
    this.mark(`${at}/params`, f, [...src, 'params']);
    const kind = raw.kind as CapabilityKind;
    const params = this.params(raw.params, entity, f, [...src, 'params'], `${at}/params`);
    const cap: Capability = {
      name,
      kind,
      entity: String(raw.entity),
      description: String(raw.description ?? ''),
      params,
      returns: (raw.returns as Returns | undefined) ?? defaultReturns(kind),
      http: { method: 'GET', path: '/', query: {}, headers: {}, array_style: 'repeat', response: { path: '' } },
    };
    if (mapping) {
      cap.http = this.mapping(mapping.raw, cap, mapping.src, ['mappings', name], `${at}/http`);
    } else if (!isPoisoned(this.poisoned, 'mappings', name)) {
      this.poisoned.add(`mappings:${name}`);
      this.fail(at, 'missing_mapping', `capability \`${name}\` has no HTTP mapping`, `add \`${name}: GET /path\` (or an object with method and path) under \`mappings:\``);
    }
    const idParam = raw.id_param !== undefined ? String(raw.id_param) : defaultIdParam(kind, params, entity);
    if (idParam !== undefined) cap.id_param = idParam;
    return cap;
  }

  private mapping(raw: unknown, cap: Capability, f: SourceData, src: KeyPath, at: string): HttpMapping {
    this.mark(at, f, src);
    for (const k of ['method', 'path', 'query', 'headers', 'body', 'pagination', 'response', 'array_style']) this.mark(`${at}/${k}`, f, [...src, k]);
    let m: Obj;
    if (typeof raw === 'string') {
      const [method, path] = raw.trim().split(/\s+/, 2);
      m = { method, path };
    } else {
      m = raw as Obj;
    }
    const method = m.method as HttpMethod;
    const http: HttpMapping = {
      method,
      path: String(m.path),
      query: templateMap(m.query),
      headers: templateMap(m.headers),
      array_style: (m.array_style as 'repeat' | 'comma' | undefined) ?? 'repeat',
      response: { path: '' },
    };
    if (m.body !== undefined) http.body = m.body as JsonValue;
    const used = new Set<string>([
      ...parseTemplate(http.path).params,
      ...Object.values(http.query).flatMap((t) => parseTemplate(t).params),
      ...Object.values(http.headers).flatMap((t) => parseTemplate(t).params),
      ...(http.body !== undefined ? jsonTemplateParams(http.body) : []),
    ]);
    const rest = cap.params.filter((p) => !used.has(p.name));
    // Terse mappings: parameters not placed anywhere go to the query (GET, DELETE) or the JSON body.
    if (method === 'GET' || method === 'DELETE') {
      if (m.query === undefined) for (const p of rest) http.query[p.name] = `{${p.name}}`;
    } else if (m.body === undefined && rest.length > 0) {
      http.body = Object.fromEntries(rest.map((p) => [p.name, `{${p.name}}`]));
    }
    // Path parameters must always be present: they are required unless the author said otherwise.
    const capAt = at.replace(/\/http$/, '');
    for (const name of parseTemplate(http.path).params) {
      const i = cap.params.findIndex((x) => x.name === name);
      const explicit = this.origins.has(`${capAt}/params/${i}/required`);
      if (i >= 0 && !explicit) cap.params[i]!.required = true;
    }
    if (isObj(m.pagination)) {
      http.pagination = normalizePagination(m.pagination);
      for (const k of Object.keys(m.pagination)) this.mark(`${at}/pagination/${k}`, f, [...src, 'pagination', k]);
      const own = ['style', 'page_size', 'max_page_size', 'size_param', ...(PAGINATION_KEYS[String(m.pagination.style)] ?? [])];
      for (const k of Object.keys(m.pagination).filter((x) => !own.includes(x))) {
        this.fail(`${at}/pagination/${k}`, 'bad_mapping', `\`${k}\` does not apply to ${String(m.pagination.style)} pagination`, `${String(m.pagination.style)} pagination takes ${own.slice(1).join(', ')}`);
      }
    }
    if (isObj(m.response)) {
      http.response = { path: String(m.response.path ?? '') };
      if (isObj(m.response.total)) http.response.total = { ...(m.response.total as { header: string }) };
    }
    return http;
  }
}

function templateMap(v: unknown): Record<string, string> {
  if (Array.isArray(v)) return Object.fromEntries(v.map((n) => [String(n), `{${String(n)}}`]));
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, t]) => [k, String(t)]));
  return {};
}

function defaultReturns(kind: CapabilityKind): Returns {
  if (kind === 'query' || kind === 'search') return 'rows';
  if (kind === 'delete') return 'none';
  return 'row';
}

/** get/update/delete/action act on one row: the parameter named like the id field, else the only required one. */
function defaultIdParam(kind: CapabilityKind, params: ParamDef[], entity: Entity | undefined): string | undefined {
  if (kind === 'query' || kind === 'search' || kind === 'create') return undefined;
  if (entity && params.some((p) => p.name === entity.id_field)) return entity.id_field;
  const required = params.filter((p) => p.required);
  if (kind !== 'action' && required.length === 1) return required[0]!.name;
  return undefined;
}

/** Keys each pagination style takes besides page_size, max_page_size and size_param. */
export const PAGINATION_KEYS: Record<string, string[]> = { page: ['page_param', 'first_page'], offset: ['offset_param'], cursor: ['cursor_param', 'next_cursor'], link: ['page_param', 'first_page'] };

function normalizePagination(p: Obj): Pagination {
  const pageSize = (p.page_size as number | undefined) ?? 25;
  const common: Obj = { style: p.style, page_size: pageSize, max_page_size: (p.max_page_size as number | undefined) ?? Math.max(100, pageSize) };
  if (p.size_param !== undefined) common.size_param = p.size_param;
  for (const k of PAGINATION_KEYS[String(p.style)] ?? []) if (p[k] !== undefined) common[k] = p[k];
  if (p.style === 'page' || p.style === 'link') common.first_page = (p.first_page as number | undefined) ?? 1;
  return common as unknown as Pagination;
}

function normalizeAuth(a: Obj): OutboundAuth {
  const out: Obj = { ...a };
  if (a.scheme === 'oauth2_client_credentials' && out.scopes === undefined) out.scopes = [];
  return out as unknown as OutboundAuth;
}

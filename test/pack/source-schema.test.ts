/**
 * The catalog source format is defined once (TypeBox): the JSON Schema ajv checks, the file
 * `svc schemas` writes, and the TypeScript types of a valid file all come from it.
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kind } from '@sinclair/typebox';
import { conforms, validateSourceFile } from '../../pack/ajv.js';
import { CatalogSourceFileSchema, type CatalogSourceFile, type SourceTypeSpec } from '../../pack/index.js';
import { parseSource } from '../../pack/source.js';
import { SHIPPED_SCHEMAS } from '../../cli/commands/schemas.js';

const CATALOGS = join(import.meta.dirname, '..', '..', 'fixtures', 'catalogs');

t.test('the shipped catalog-source schema is the TypeBox definition ajv compiles', async (t) => {
  t.equal(SHIPPED_SCHEMAS['catalog-source.schema.json'], CatalogSourceFileSchema);
  t.equal(CatalogSourceFileSchema[Kind], 'Object', 'built with TypeBox');
  t.equal(CatalogSourceFileSchema.$schema, 'http://json-schema.org/draft-07/schema#', 'draft-07, for editors');
  const text = JSON.stringify(CatalogSourceFileSchema);
  t.notMatch(text, /"\$id":"#/, 'the recursive type is a plain definition, referenced by JSON pointer');
  t.match(text, /"\$ref":"#\/definitions\/typeOrShorthand"/);
});

t.test('a valid file narrows to CatalogSourceFile, recursion included', async (t) => {
  for (const catalog of readdirSync(CATALOGS)) {
    for (const f of readdirSync(join(CATALOGS, catalog)).filter((x) => x.endsWith('.yaml'))) {
      const data = parseSource({ file: f, text: readFileSync(join(CATALOGS, catalog, f), 'utf8') }).source?.data;
      t.ok(conforms(CatalogSourceFileSchema, data), `${catalog}/${f}`);
    }
  }
  const data: unknown = parseSource({
    file: 'x.yaml',
    text: 'entities:\n  A:\n    fields:\n      id: string\n      meta: {type: object, fields: {tags: {type: array, items: {type: enum, values: [a, 1]}}}}\n',
  }).source?.data;
  if (!conforms(CatalogSourceFileSchema, data)) throw new Error('expected a valid file');
  const meta: SourceTypeSpec | undefined = data.entities?.A?.fields.meta;
  const tags = typeof meta === 'object' ? meta.fields?.tags : undefined;
  const items = typeof tags === 'object' ? tags.items : undefined;
  t.same(typeof items === 'object' ? items.values : undefined, ['a', 1], 'typed through fields -> items -> values');
});

t.test('the types follow the schema (checked by tsc)', async (t) => {
  const ok: CatalogSourceFile = {
    catalog: { entry_id: 'x', version: 1, label: 'X', description: 'd', backend: { url: 'https://x' } },
    capabilities: { getA: { kind: 'get', entity: 'A', params: ['id'] } },
    mappings: { getA: 'GET /a/{id}' },
  };
  t.same(validateSourceFile(ok), [], 'what the type allows, the schema allows');
  // @ts-expect-error `fetch` is not a capability kind
  const bad: CatalogSourceFile = { capabilities: { getA: { kind: 'fetch', entity: 'A' } } };
  t.match(
    validateSourceFile(bad),
    [{ keyword: 'enum', instancePath: '/capabilities/getA/kind' }],
    'and what it refuses, the schema refuses',
  );
});

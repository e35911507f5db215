/** schemas/ is generated from the code (so it cannot drift) and the bundled YAML files validate against it. */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { SHIPPED_SCHEMAS, schemaFileText } from '../../cli/commands/schemas.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SCHEMAS = join(ROOT, 'schemas');

t.test('schemas/ holds exactly the shipped schemas, byte for byte', async (t) => {
  t.same(readdirSync(SCHEMAS).sort(), Object.keys(SHIPPED_SCHEMAS).sort(), 'same file names');
  for (const [name, schema] of Object.entries(SHIPPED_SCHEMAS)) {
    t.equal(
      readFileSync(join(SCHEMAS, name), 'utf8'),
      schemaFileText(schema),
      `${name} matches the code (regenerate with \`npm run schemas\`)`,
    );
  }
});

/** A validator compiled from the file in schemas/ by an ajv that svc's own code never touched. */
function freshValidator() {
  const schema = JSON.parse(readFileSync(join(SCHEMAS, 'catalog-source.schema.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  if (schema.$schema !== 'http://json-schema.org/draft-07/schema#')
    throw new Error('catalog-source.schema.json is not draft-07');
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  return ajv.compile(schema);
}

t.test('every bundled catalog source file validates against schemas/catalog-source.schema.json', async (t) => {
  const validate = freshValidator();
  for (const catalog of ['brewery', 'helpdesk']) {
    const dir = join(ROOT, 'fixtures', 'catalogs', catalog);
    const files = readdirSync(dir)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort();
    t.same(
      files,
      ['capabilities.yaml', 'catalog.yaml', 'entities.yaml', 'mappings.yaml'],
      `${catalog}: one file per section`,
    );
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      t.match(
        text,
        /^# yaml-language-server: \$schema=\.\.\/\.\.\/\.\.\/schemas\/catalog-source\.schema\.json\n/,
        `${catalog}/${f} points editors at the schema`,
      );
      t.ok(validate(parse(text)), `${catalog}/${f} is valid: ${JSON.stringify(validate.errors ?? [])}`);
    }
  }
});

t.test('the schema file rejects what the authoring format forbids', async (t) => {
  const validate = freshValidator();
  const bad = readFileSync(join(ROOT, 'fixtures', 'invalid', 'schema-violation', 'catalog.yaml'), 'utf8');
  t.notOk(validate(parse(bad)), 'a misspelt key is rejected');
  t.match(validate.errors, [
    { keyword: 'required' },
    { keyword: 'additionalProperties', params: { additionalProperty: 'descripton' } },
  ]);
  t.notOk(validate({ mappings: { getX: 'FETCH /x' } }), 'a mapping with an unknown method');
  t.notOk(validate({ capabilities: { getX: { kind: 'fetch', entity: 'X' } } }), 'an unknown kind');
  t.ok(validate({ mappings: { getX: 'GET /x/{id}' } }), 'the string shorthand');
});

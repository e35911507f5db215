/**
 * Request bodies (runtime/request.ts): an object of a body template none of whose parameters was
 * passed is left out, as an absent parameter's key is, so an optional nested object is never sent
 * as `{}`; a body of nothing is not sent, unless the mapping's `body_required` asks for `{}` (`true`)
 * or the constant it gives (a wrapper's empty object).
 */
import t from 'tap';
import type { Capability, HttpMapping, JsonValue } from '../../pack/cgs.js';
import { buildRequest, renderBody } from '../../runtime/request.js';

const BASE = 'https://api.example.test';

function cap(http: Partial<HttpMapping>): Capability {
  return {
    name: 'putVault',
    kind: 'update',
    entity: 'Vault',
    description: '',
    params: [],
    returns: 'row',
    http: {
      method: 'PUT',
      path: '/vaults/1',
      query: {},
      headers: {},
      array_style: 'repeat',
      response: { path: '' },
      ...http,
    },
  };
}

const NESTED: JsonValue = {
  location: '{location}',
  properties: { kind: '{kind}', size: '{size}', encryption: { keySource: '{keySource}' } },
};

t.test('a nested object is sent with the members passed, and left out when none is', async (t) => {
  t.same(renderBody(NESTED, { location: 'west', kind: 'premium', size: 3 }), {
    location: 'west',
    properties: { kind: 'premium', size: 3 },
  });
  t.same(renderBody(NESTED, { location: 'west' }), { location: 'west' }, 'no `properties: {}`');
  t.same(renderBody(NESTED, { keySource: 'vault' }), { properties: { encryption: { keySource: 'vault' } } });
  t.equal(renderBody(NESTED, {}), undefined, 'nothing passed: no body');
  t.same(
    renderBody({ name: '{name}', meta: {}, flags: { on: true } }, {}),
    { meta: {}, flags: { on: true } },
    'constant objects stay',
  );
});

t.test('buildRequest sends a required body as {} or its constant, an optional one not at all', async (t) => {
  const wrapped = { data: { name: '{name}' } };
  const optional = buildRequest(BASE, cap({ body: wrapped }), {});
  t.equal(optional.body, undefined, 'an optional body of nothing is not sent');
  t.notOk('content-type' in optional.headers);
  const required = buildRequest(BASE, cap({ body: wrapped, body_required: true }), {});
  t.equal(required.body, '{}');
  t.equal(required.headers['content-type'], 'application/json');
  const inWrapper = buildRequest(BASE, cap({ body: wrapped, body_required: { data: {} } }), {});
  t.equal(inWrapper.body, '{"data":{}}', 'the constant, a wrapper around nothing');
  const bare = buildRequest(BASE, cap({ body_required: true }), {});
  t.equal(bare.body, '{}', 'no template: `{}`');
  const given = buildRequest(BASE, cap({ body: wrapped, body_required: { data: {} } }), { name: 'x' });
  t.equal(given.body, '{"data":{"name":"x"}}', 'with a parameter the template is rendered as ever');
  const form = buildRequest(BASE, cap({ body: { name: '{name}' }, body_encoding: 'form', body_required: true }), {});
  t.equal(form.body, '', 'a required form body of no field is an empty form');
  t.equal(form.headers['content-type'], 'application/x-www-form-urlencoded');
  const get = buildRequest(BASE, cap({ method: 'GET', body_required: true }), {});
  t.equal(get.body, undefined, 'a GET carries no body');
});

/**
 * The pure half of the `$ref` policy: where a `$ref` leads (resolved as a URL against its file,
 * as the resolver resolves it) and where each `$ref` of a document is. The end-to-end behaviour
 * over the real `svc` process is in import-refs.test.ts.
 */
import t from 'tap';
import { refsIn, refTarget, within } from '../../pack/import/ref-policy.js';

const FROM = '/api/spec/openapi.yaml';

t.test('refTarget: local pointers, files, URLs and what no reader takes', async (t) => {
  t.same(refTarget('#/components/schemas/A', FROM), { kind: 'local' });
  t.same(refTarget('thing.yaml', FROM), { kind: 'file', path: '/api/spec/thing.yaml' });
  t.same(refTarget('./sub/thing.yaml#/x', FROM), { kind: 'file', path: '/api/spec/sub/thing.yaml' });
  t.same(refTarget('../secret.yaml#/token', FROM), { kind: 'file', path: '/api/secret.yaml' });
  t.same(refTarget('%2e%2e/%2e%2e/etc/passwd', FROM), { kind: 'file', path: '/etc/passwd' }, 'encoded dots are dots');
  t.same(refTarget('sub/../../../etc/passwd', FROM), { kind: 'file', path: '/etc/passwd' });
  t.same(refTarget('/etc/passwd', FROM), { kind: 'file', path: '/etc/passwd' });
  t.same(refTarget('file:///etc/passwd#/x', FROM), { kind: 'file', path: '/etc/passwd' });
  t.same(refTarget('http://127.0.0.1/x.yaml', FROM), { kind: 'url', scheme: 'http' });
  t.same(refTarget(' HTTPS://example.com/x.yaml', FROM), { kind: 'url', scheme: 'https' }, 'spaces and case');
  t.same(refTarget('x:../../etc/passwd', FROM), { kind: 'url', scheme: 'x' }, 'any scheme is a URL');
  t.same(refTarget('file://host/etc/passwd', FROM), { kind: 'unreadable' }, 'a file URL with a host');
  t.same(refTarget('a%2F..%2F..%2Fetc', FROM), { kind: 'unreadable' }, 'an encoded slash');
});

t.test('within: a folder and what is under it, not a sibling sharing its prefix', async (t) => {
  t.ok(within('/api/spec', '/api/spec'));
  t.ok(within('/api/spec/a/b.yaml', '/api/spec'));
  t.notOk(within('/api/spec-secrets/a.yaml', '/api/spec'));
  t.ok(within('/etc/passwd', '/'));
});

t.test('refsIn: every $ref with its JSON pointer, shared objects once, cycles end', async (t) => {
  const shared = { $ref: 'b.yaml' };
  const cyclic: Record<string, unknown> = { name: 'c' };
  cyclic.self = cyclic;
  const doc = {
    $ref: '#/top',
    paths: { '/a/{id}': { get: { schema: { $ref: 'a~b.yaml' } } } },
    list: [1, { $ref: '../x.yaml' }, shared, shared],
    cyclic,
    notARef: { $ref: 42 },
  };
  t.same(refsIn(doc), [
    { ref: '#/top', pointer: '' },
    { ref: 'a~b.yaml', pointer: '/paths/~1a~1{id}/get/schema' },
    { ref: '../x.yaml', pointer: '/list/1' },
    { ref: 'b.yaml', pointer: '/list/2' },
  ]);
});

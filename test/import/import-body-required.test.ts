/**
 * What a request body's schema requires is required even when the document marks the body itself
 * optional: svc sends the body whenever a program passes one of its parameters, and a vendor
 * validating it refuses one without those fields. fixtures/openapi/truth.yaml `createKeeper`: an optional body requiring `name`.
 */
import t from 'tap';
import { importAndPack } from '../_helpers/import.js';

t.test('a property an optional body requires is a required parameter', async (t) => {
  const { cgs } = await importAndPack('truth.yaml');
  const cap = cgs.capabilities.find((c) => c.name === 'createKeeper')!;
  t.ok(cap, 'createKeeper is imported');
  t.same(
    cap.params.map((p) => [p.name, p.required]),
    [
      ['name', true],
      ['since', false],
    ],
  );
  const create = cgs.capabilities.find((c) => c.name === 'createLighthouse')!;
  t.same(
    create.params.filter((p) => p.required).map((p) => p.name),
    ['name', 'height'],
    'a required body keeps its required fields',
  );
});

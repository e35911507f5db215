import t from 'tap';
import { compileSource, readSourceDir } from '../../pack/index.js';

t.test('the bundled brewery catalog compiles', async (t) => {
  const r = compileSource(await readSourceDir('fixtures/catalogs/brewery'));
  t.same(r.diagnostics, []);
  t.equal(r.cgs?.entry_id, 'brewery');
});

/**
 * The session graph across replicas: two `svc serve` processes sharing one real redis-server, both
 * with a max age, in front of one vendor that counts its requests. A get by id of a brewery that
 * replica A listed is answered from A's graph; after a write of that brewery on replica B, A's next
 * get goes to the vendor and answers the new value (A forgot the rows of the entity B wrote,
 * through the session's write count in Redis), and A's rows of another entity are still used.
 */
import t from 'tap';
import { serve } from '../_helpers/cli.js';
import { startFaultVendor } from '../_helpers/fault-vendor.js';
import { startRedis } from '../_helpers/redis.js';
import { openSession, PACKED, runProgram } from '../_helpers/server.js';

const redis = await startRedis(t);
let city = 'Ghent';
const brewery = () => ({ id: 'b-3', name: 'Core', city, country: 'BE', kind: 'micro' });
const vendor = await startFaultVendor({
  'GET /breweries': () => ({ json: [brewery()] }),
  'GET /breweries/:id': () => ({ json: brewery() }),
  'PATCH /breweries/:id': (req) => {
    city = (JSON.parse(req.body) as { city: string }).city;
    return { json: brewery() };
  },
  'GET /beers': { json: [{ id: 1, breweryId: 'b-3', name: 'One', style: 'ipa', abv: 5 }] },
  'GET /beers/:id': { json: { id: 1, breweryId: 'b-3', name: 'One', style: 'ipa', abv: 5 } },
});
t.teardown(() => vendor.close());

const replica = () =>
  serve(t, ['--catalog-dir', PACKED, '--port', '0', '--backend', `brewery=${vendor.url}`], {
    SVC_MCP_TRANSPORT_KV_URL: redis.url,
    SVC_GRAPH_MAX_AGE_SECS: '60',
  });

t.test("a write on replica B makes replica A's graph forget the rows of that entity", async (t) => {
  const [a, b] = await Promise.all([replica(), replica()]);
  const { path } = await openSession(a.url, { entry_id: 'brewery', seeds: ['Brewery', 'Beer'] });
  const gets = () => vendor.hits('/breweries/b-3', 'GET').length;
  const beerGets = () => vendor.hits('/beers/1', 'GET').length;
  const run = async (url: string, program: string, query = '') => {
    const r = await runProgram(url, path, program, query);
    t.equal(r.status, 200, `${program}: ${r.text.slice(0, 200)}`);
    return r;
  };
  await run(a.url, 'brewery:Brewery()');
  await run(a.url, 'brewery:Beer()');
  const first = await run(a.url, 'brewery:Brewery("b-3")[name, city]');
  t.equal(gets(), 0, 'A answers the get from the rows it listed: no vendor call');
  t.same(first.body.rows, [{ name: 'Core', city: 'Ghent' }]);

  await run(b.url, 'brewery:Brewery("b-3").updateBrewery(city="Graphville")', 'force=true');
  t.equal(city, 'Graphville', "B's write reached the vendor");

  const after = await run(a.url, 'brewery:Brewery("b-3")[name, city]');
  t.equal(gets(), 1, 'A sends the get after the write on B');
  t.same(after.body.rows, [{ name: 'Core', city: 'Graphville' }], 'and answers the new city');
  await run(a.url, 'brewery:Beer(1)[name]');
  t.equal(beerGets(), 0, "A's rows of another entity are still used");
});

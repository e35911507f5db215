/**
 * Test helper of the Redis replica tests (redis-compare-and-set): the packed
 * brewery catalog on a fault vendor whose `GET /beers` answers one row naming the request it
 * answers (`Beer <n>`, after `beer.delayMs`), a memory artifact store, and repositories on a test
 * Redis, each on its own connection (another process), closed in teardown.
 *
 * @example
 * const { vendor, registry, artifacts, beer } = await breweryWorld(t);
 * const a = await redisRepo(t, redis.url, 'peek1:');
 */
import type { Test } from 'tap';
import { join } from 'node:path';
import { loadCatalogDir } from '../../pack/load.js';
import type { Registry } from '../../pack/registry.js';
import { MemoryArtifactStore } from '../../runtime/artifacts/index.js';
import { RedisSessionRepository, type RedisRepositoryOptions } from '../../server/execute/redis-repository.js';
import { startFaultVendor, type FaultVendor } from './fault-vendor.js';

export interface BreweryWorld {
  vendor: FaultVendor;
  /** The packed fixtures with `brewery` pointed at the vendor (e1 is brewery:Beer). */
  registry: Registry;
  artifacts: MemoryArtifactStore;
  /** How long the vendor takes to answer `GET /beers` (ms; change it between requests). */
  beer: { delayMs: number };
}

export async function breweryWorld(t: Test): Promise<BreweryWorld> {
  const beer = { delayMs: 0 };
  const vendor = await startFaultVendor({
    'GET /beers': (_req, n) => ({
      json: [{ id: 1, breweryId: 'b-1', name: `Beer ${n}`, style: 'ipa', abv: 5 }],
      delayMs: beer.delayMs,
    }),
    'GET /breweries': { json: [{ id: 'b-1', name: 'Core', city: 'Ghent', country: 'BE', kind: 'micro' }] },
  });
  t.teardown(() => vendor.close());
  const { registry } = await loadCatalogDir(join(import.meta.dirname, '..', '..', 'fixtures', 'packed'), {
    backendOverrides: { brewery: vendor.url },
  });
  const artifacts = new MemoryArtifactStore({ retentionSecs: 60, gcIntervalSecs: 60 });
  t.teardown(() => artifacts.close());
  return { vendor, registry, artifacts, beer };
}

/** A repository on the Redis at `url` under `keyPrefix` (its own connection), closed in `t`'s teardown. */
export async function redisRepo(
  t: Test,
  url: string,
  keyPrefix: string,
  opts: RedisRepositoryOptions = {},
): Promise<RedisSessionRepository> {
  const r = await RedisSessionRepository.connect(url, { keyPrefix, ...opts });
  t.teardown(() => r.close());
  return r;
}

/**
 * `svc demo` (what `npm start` runs): pack the bundled catalogs, load them, start the bundled
 * json-server vendor and point the catalogs at it. The server issue turns this into the full demo.
 */
import { Command, InvalidArgumentError } from 'commander';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SvcFailure } from '../../common/errors.js';
import { compileSource, loadCatalogDir, readSourceDir, writeArtifacts } from '../../pack/index.js';
import { startDemoVendor } from '../demo-vendor.js';
import { teachabilityCheck } from '../../compiler/teachable.js';
import { packageRoot } from '../package-root.js';
import { describeRegistry } from './catalogs.js';

/** A TCP port number from a command-line value (a usage error otherwise). */
export function parsePort(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return n;
}

/** The authored catalogs bundled with svc (directories under fixtures/catalogs). */
export async function bundledCatalogSources(): Promise<string[]> {
  const dir = join(packageRoot(), 'fixtures', 'catalogs');
  return (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => join(dir, d.name)).sort();
}

export function demoCommand(): Command {
  return new Command('demo')
    .description('pack the bundled catalogs, start the bundled demo vendor (json-server) and show what was loaded')
    .option('--port <n>', 'port of the demo vendor (default: a free port)', parsePort)
    .option('--once', 'print the summary and exit instead of serving until Ctrl-C')
    .action(async (opts: { port?: number; once?: boolean }) => {
      const out = await mkdtemp(join(tmpdir(), 'svc-demo-'));
      for (const src of await bundledCatalogSources()) {
        const compiled = compileSource(await readSourceDir(src), [teachabilityCheck]);
        if (!compiled.cgs) throw new SvcFailure(compiled.diagnostics);
        await writeArtifacts(compiled.cgs, compiled.cgs_hash!, out);
      }
      const vendor = await startDemoVendor(opts.port !== undefined ? { port: opts.port } : {});
      const ids = (await readdir(out)).filter((f) => f.endsWith('.manifest.json')).map((f) => f.split('.')[0]!);
      const loaded = await loadCatalogDir(out, { extraChecks: [teachabilityCheck], backendOverrides: Object.fromEntries(ids.map((id) => [id, vendor.url])) });
      if (loaded.problems.length) throw new SvcFailure(loaded.problems);
      process.stdout.write(`packed ${loaded.registry.size} bundled catalogs into ${out} (removed on exit)\n`);
      process.stdout.write(describeRegistry(loaded.registry));
      process.stdout.write(`demo vendor (json-server) listening on ${vendor.url}\n`);
      process.stdout.write(`try: curl '${vendor.url}/breweries?city=Berlin'\n`);
      const stop = async () => {
        await vendor.close();
        await rm(out, { recursive: true, force: true });
      };
      if (opts.once) return stop();
      process.stdout.write('press Ctrl-C to stop\n');
      await new Promise<void>((resolve) => {
        const done = () => void stop().then(resolve);
        process.once('SIGINT', done);
        process.once('SIGTERM', done);
      });
    });
}

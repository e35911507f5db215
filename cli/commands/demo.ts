/**
 * `svc demo` (what `npm start` runs): pack the bundled catalogs, start the bundled json-server
 * vendor, serve them with `svc serve` pointed at it, open a session and print curl lines that
 * work when pasted.
 */
import { Command, Option } from 'commander';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SvcFailure } from '../../common/errors.js';
import { compileSource, readSourceDir, writeArtifacts } from '../../pack/index.js';
import { startDemoVendor } from '../demo-vendor.js';
import { teachabilityCheck } from '../../compiler/teachable.js';
import { packageRoot } from '../package-root.js';
import { DEFAULT_PORT } from '../../server/serve.js';
import { parsePort } from '../parse-port.js';
import { startServe, untilSignal } from './serve.js';

/** The authored catalogs bundled with svc (directories under fixtures/catalogs). */
export async function bundledCatalogSources(): Promise<string[]> {
  const dir = join(packageRoot(), 'fixtures', 'catalogs');
  return (await readdir(dir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => join(dir, d.name))
    .sort();
}

export function demoCommand(): Command {
  return new Command('demo')
    .description(
      'pack the bundled catalogs, start the bundled demo vendor (json-server) and serve them over HTTP and MCP',
    )
    .addOption(
      new Option('--port <n>', `port of svc (0 = a free port; a busy default port falls back to a free one)`)
        .default(DEFAULT_PORT)
        .argParser(parsePort),
    )
    .option('--vendor-port <n>', 'port of the demo vendor (default: a free port)', parsePort)
    .option('--once', 'start, print the summary and the examples, then stop (for checks)')
    .option('--no-ui', 'do not serve the playground web page at /')
    .action(async (opts: { port: number; vendorPort?: number; once?: boolean; ui: boolean }) => {
      const out = await mkdtemp(join(tmpdir(), 'svc-demo-'));
      const vendor = await startDemoVendor(opts.vendorPort !== undefined ? { port: opts.vendorPort } : {});
      const cleanup = async () => {
        await vendor.close();
        await rm(out, { recursive: true, force: true });
      };
      try {
        const ids: string[] = [];
        for (const src of await bundledCatalogSources()) {
          const compiled = compileSource(await readSourceDir(src), [teachabilityCheck]);
          if (!compiled.cgs) throw new SvcFailure(compiled.diagnostics);
          await writeArtifacts(compiled.cgs, compiled.cgs_hash!, out);
          ids.push(compiled.cgs.entry_id);
        }
        const flags = {
          catalogDir: out,
          backend: ids.map((id) => `${id}=${vendor.url}`),
          port: opts.port,
          host: '127.0.0.1',
          http: true,
          mcp: true,
          ui: opts.ui,
        };
        const running = await startServe(flags, process.env).catch(async (e: NodeJS.ErrnoException) => {
          if (e?.code !== 'EADDRINUSE' || opts.port === 0) throw e;
          process.stdout.write(`port ${opts.port} is busy; using a free port\n`);
          return startServe({ ...flags, port: 0 }, process.env);
        });
        const base = running.listening.url;
        const session = await running.app.service.open({ entry_id: 'brewery', intent: 'demo' }, '');
        const ph = session.extra.prompt_hash;
        const sid = session.extra.session;
        process.stdout.write(
          [
            `demo vendor (json-server) on ${vendor.url}; catalogs packed into ${out} (removed on exit)`,
            '',
            `a session on brewery is open (prompt_hash ${ph}, session ${sid}); try:`,
            `  curl -s -X POST '${base}/execute/${ph}/${sid}' -H 'accept: text/plain' --data-binary 'e1(city="Berlin")[name,city]'`,
            `  curl -s '${base}/execute/${ph}/${sid}/symbols'          # the teaching table of the session`,
            `open your own session:`,
            `  curl -s -X POST '${base}/execute' -H 'content-type: application/json' -H 'accept: text/plain' -d '{"entry_id":"brewery","seeds":["brewery:Brewery","brewery:Beer"]}'`,
            `list catalogs: curl -s '${base}/v1/registry'`,
            '',
            `MCP (Streamable HTTP): ${base}/mcp; an MCP client config (mcp.json / claude_desktop_config.json style):`,
            `  {"mcpServers": {"svc": {"type": "http", "url": "${base}/mcp"}}}`,
            `  agents call svc_context first, then svc (see docs/mcp.md)`,
            '',
          ].join('\n'),
        );
        if (!opts.once) {
          process.stdout.write('press Ctrl-C to stop\n');
          await untilSignal();
        }
        await running.stop();
      } finally {
        await cleanup();
      }
    });
}

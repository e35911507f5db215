// Builds the playground (web/) into dist/web with esbuild: dist/web/ui/app-<hash>.js and .css
// (content-hashed names), dist/web/index.html referencing them, and dist/web/manifest.json listing
// every file the server may serve (server/ui.ts serves nothing else). Run by `npm run build`.
import { build } from 'esbuild';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'web');
const assets = join(out, 'ui');

await rm(out, { recursive: true, force: true });
await mkdir(assets, { recursive: true });

const result = await build({
  entryPoints: { app: join(root, 'web', 'src', 'main.tsx') },
  outdir: assets,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  bundle: true,
  format: 'esm',
  splitting: false,
  minify: true,
  sourcemap: false,
  target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: join(root, 'web', 'tsconfig.json'),
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
});

const files = Object.keys(result.metafile.outputs)
  .map((p) => basename(p))
  .sort();
const js = files.find((f) => f.endsWith('.js'));
const css = files.find((f) => f.endsWith('.css'));
if (!js || !css) throw new Error(`the web build made no script or no stylesheet: ${files.join(', ')}`);

const template = await readFile(join(root, 'web', 'src', 'index.html'), 'utf8');
// The server puts a fresh CSP nonce in place of {{CSP_NONCE}} in every answer to GET /.
const html = template.replace('{{JS}}', `ui/${js}`).replace('{{CSS}}', `ui/${css}`);
await writeFile(join(out, 'index.html'), html);
await writeFile(
  join(out, 'manifest.json'),
  JSON.stringify({ format: 1, index: 'index.html', assets: files }, null, 2) + '\n',
);

const sizes = await Promise.all(
  files.map(async (f) => `${f} ${((await readFile(join(assets, f))).length / 1024).toFixed(0)} KiB`),
);
process.stdout.write(`web: dist/web/index.html, ${sizes.join(', ')}\n`);

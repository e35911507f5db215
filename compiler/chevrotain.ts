/**
 * The chevrotain values the compiler uses, loaded from the package's single-file ESM build
 * (`lib/chevrotain.mjs`, the same code as its multi-file entry, bundled with its lodash-es
 * helpers): about 10 ms to import instead of about 180 ms for the roughly 700 files of the entry
 * point, which every `svc run` and every server start would pay. The package's exports map does
 * not name that file, so it is found next to the entry; if a release moves it, the entry is
 * loaded instead. Every compiler module imports chevrotain values from here (eslint enforces
 * it), so tokens and parsers always come from one copy. Types come from 'chevrotain' directly.
 */
import type * as Chevrotain from 'chevrotain';

async function load(): Promise<typeof Chevrotain> {
  try {
    return (await import(new URL('../chevrotain.mjs', import.meta.resolve('chevrotain')).href)) as typeof Chevrotain;
  } catch {
    return import('chevrotain');
  }
}

const lib = await load();

export const { createToken, Lexer, CstParser, EOF } = lib;

/**
 * The playground's highlighter follows the compiler's lexer: web/src/lang/tokens.ts names every
 * Chevrotain token of compiler/tokens.ts (and no other), its keywords, punctuation and patterns are
 * the compiler's, and its line-at-a-time tokenizer cuts sample programs (heredocs included) into
 * the same tokens, of the same classes, as the compiler's lexer.
 */
import t from 'tap';
import type { TokenType } from 'chevrotain';
import { Lexer } from '../../compiler/chevrotain.js';
import { allTokens, Identifier } from '../../compiler/tokens.js';
import { KEYWORDS, PATTERNS, PUNCTUATION, TOKEN_CLASSES } from '../../web/src/lang/tokens.js';
import { tokenizeText } from '../../web/src/lang/tokenize.js';

const name = (tt: TokenType) => tt.name;
const patternOf = (tt: TokenType) => (tt as { PATTERN?: unknown }).PATTERN;

t.test('every token of the compiler has a class in the playground, and no other', async (t) => {
  t.same(Object.keys(TOKEN_CLASSES).sort(), allTokens.map(name).sort());
});

t.test('keywords and punctuation are the compiler’s', async (t) => {
  const keywords = allTokens.filter((tt) => (tt as { LONGER_ALT?: unknown }).LONGER_ALT === Identifier);
  t.same(
    keywords.map((tt) => (patternOf(tt) as RegExp).source),
    [...KEYWORDS],
    'the tokens with longer_alt: Identifier',
  );
  const punct = allTokens.filter((tt) => typeof patternOf(tt) === 'string').map((tt) => patternOf(tt) as string);
  t.same([...punct].sort(), [...PUNCTUATION].sort(), 'the tokens with a string pattern');
});

t.test('shared patterns are the compiler’s, character for character', async (t) => {
  for (const [key, re] of Object.entries(PATTERNS)) {
    const tt = allTokens.find((x) => x.name === key);
    t.ok(tt, `${key} is a compiler token`);
    t.equal(re.source, (patternOf(tt!) as RegExp).source, key);
  }
});

const SAMPLES = [
  'e1(city="Berlin", kind="micro")[name,city]',
  '# Berlin breweries\nb = e1(city="Berlin")[id,name]\ne2(breweryId=b.id, available=true)[name,abv]',
  'brewery:Brewery(city="Berlin"); help-desk:Ticket',
  'e2(7).reviews(rating=5, n=-12, x=2.5e-3, y=null, z=false)[author,text]',
  'm1(name="Pen & Quill", tags=["craft", "local"], address={city: "Berlin", zip: "10115"})',
  'm6(beerId=7, rating=4, text=<<EOT\nCrisp and clean.\nWould drink "again". # not a comment\nEOT)',
  'm6(text=<<EOT\nglued before a comma\nEOT, rating=4)\nm1(name="X", address={street: <<ADDR\nHauptstr. 1\n\nADDR})',
  'm6(text=<<EOT\n    the closing line may be indented\n    EOTX is body\n    EOT\n)',
  'm6(text=<<EOT\nnever closed\n',
  "e1(city='Berlin', x=\"open, y=12abc)",
  'page(pg3)[name,city]\nwait(o2); cancel(o2)',
  'trueish = e1 ; nullable.x',
  'm6(text=<< EOT\n)',
  'm6(text="""old""")',
];

t.test('the tokenizer cuts sample programs as the compiler’s lexer does', async (t) => {
  const lexer = new Lexer(allTokens, { positionTracking: 'onlyOffset' });
  for (const text of SAMPLES) {
    const { tokens, errors } = lexer.tokenize(text);
    t.same(errors, [], `the compiler lexes ${JSON.stringify(text)}`);
    const want = tokens
      .map((tk) => ({
        from: tk.startOffset,
        to: tk.startOffset + tk.image.length,
        cls: TOKEN_CLASSES[tk.tokenType.name],
      }))
      .filter((s) => s.cls !== 'skip');
    const got = tokenizeText(text)
      .filter((s) => s.cls !== 'comment')
      .map(({ from, to, cls }) => ({ from, to, cls }));
    t.same(got, want, JSON.stringify(text));
  }
});

t.test('names get their roles: symbols, handles, continuations, argument names', async (t) => {
  const roles = tokenizeText('x = e1(city="B").r2[name]\npage(pg3)\nm4(o2)')
    .filter((s) => s.cls === 'name')
    .map((s) => s.role ?? '-');
  t.same(roles, ['argument', 'symbol', 'argument', 'symbol', '-', 'continuation', 'handle', 'symbol', 'handle']);
});

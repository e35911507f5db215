/**
 * "Every compile error for a plausible mistake names the fix": wrong programs an agent writes
 * against the bundled catalogs (brewery + helpdesk), each with the code it must get and a piece of
 * text the hint must hold that states the fix (the corrected form, or the exact name to use).
 * Compiled as the server compiles them: `compileProgram` with the session's symbol table, where
 * e1 = brewery:Brewery, e2 = brewery:Beer, e3 = brewery:Review and e4 = helpdesk:Ticket.
 */
import t from 'tap';
import type { ErrorCode } from '../../common/errors.js';
import { compileProgram } from '../../compiler/index.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';

interface Row {
  /** What the agent meant. */
  mistake: string;
  program: string;
  code: ErrorCode;
  /** Text the hint of the first diagnostic must contain. */
  fix: string;
}

const row = (mistake: string, program: string, code: ErrorCode, fix: string): Row => ({ mistake, program, code, fix });

const ROWS: Row[] = [
  // Arguments a list does not take.
  row('search by a field the list cannot filter', 'e1(name="Pen")', 'unknown_argument', 'e1(q="Pen")'),
  row('search tickets by title', 'e4(title="printer")', 'unknown_argument', 'e4(q="printer")'),
  row('search with a filter too', 'e4(subject="printer", status="open")', 'unknown_argument', 'e4(q="printer")'),
  row(
    'filter with no search to fall back on',
    'e2(title="x")',
    'unknown_argument',
    '`style`, `breweryId`, `available`, `name`',
  ),
  row('a filter typo', 'e1(citty="Berlin")', 'unknown_argument', 'did you mean `city`?'),
  row('a get id passed to the list', 'e1(id="b-1", city="Berlin")', 'unknown_argument', 'e1("b-1")'),
  row('offset paging', 'e2(style="IPA", limit=10, offset=10)', 'unknown_argument', 'page(pgN)'),
  // Sorting: sort="field", order="asc"|"desc" on a list that sorts.
  row(
    "another API's sort argument",
    'e2(style="IPA", orderBy="abv")',
    'unknown_argument',
    'e2(style="IPA", sort="abv")',
  ),
  row(
    'order without sort',
    'e4(order="desc", limit=10)',
    'missing_argument',
    'e4(sort="createdAt", order="desc", limit=10)',
  ),
  row('descending with a minus', 'e4(sort="-createdAt")', 'unsortable_field', 'e4(sort="createdAt", order="desc")'),
  row('the direction inside sort', 'e2(sort="abv desc")', 'unsortable_field', 'e2(sort="abv", order="desc")'),
  row('a sort field typo', 'e4(sort="created")', 'unsortable_field', 'did you mean `createdAt`?'),
  row('an unknown sort field', 'e3(sort="stars")', 'unsortable_field', 'sorts by id, beerId, rating'),
  row('a bare sort field', 'e4(sort=createdAt)', 'wrong_type', 'sort="createdAt"'),
  row('a spelt-out order', 'e4(sort="createdAt", order="descending")', 'enum_value_not_allowed', 'order="desc"'),
  row('sorting one row', 'e2(7).brewery(sort="name")', 'not_sortable', 'e1(sort="name") (listBreweries)'),
  row('a parameter typo of a capability', 'm7(customerID="c-1")', 'unknown_argument', 'did you mean `customerId`?'),
  row('an update argument typo', 'e4("t-1").m9(state="closed")', 'unknown_argument', 'did you mean `status`?'),
  row('confirming a write inside the program', 'e2(7).m4(confirm=true)', 'unknown_argument', 'dry-run the program'),
  row(
    'forcing a write inside the program',
    'm3(breweryId="b-1", name="Dark", style="Stout", abv=5.2, force=true)',
    'unknown_argument',
    'remove `force`',
  ),
  // Members that are not relations or capabilities.
  row('a field read as a member', 'e2(7).name', 'unknown_relation', '`name` is a field: write e2(7)[name]'),
  row('a field of a string-id row', 'e1("b-1").city', 'unknown_relation', 'e1("b-1")[city]'),
  row('a field after a relation', 'e2(7).brewery.name', 'unknown_relation', 'e2(7).brewery[name]'),
  row('a field of a binding', 'x = e1(city="Berlin")\nx.name', 'unknown_relation', 'x = e1(city="Berlin")[name]'),
  row('limit as a method', 'e1(city="Berlin").limit(5)', 'unknown_relation', 'e1(city="Berlin", limit=5)'),
  row('filter as a method', 'e1.where(city="Berlin")', 'unknown_relation', 'e1(city="Berlin")'),
  row('a relation typo', 'e1("b-1").bers', 'unknown_relation', 'did you mean `beers`'),
  row('a capability by a part of its name', 'e2(7).retire', 'unknown_relation', '`m4` (retireBeer)'),
  row('delete as a method', 'e2(7).delete', 'unknown_relation', '`m5` (deleteBeer)'),
  row(
    'a create written on the parent row',
    'e1("b-1").m3(name="Dark", style="Stout", abv=5.2)',
    'unknown_relation',
    'm3(breweryId="b-1", name="Dark", style="Stout", abv=5.2)',
  ),
  row(
    'a query written on the parent row',
    'e1("b-1").m7(customerId="c-1")',
    'unknown_relation',
    'm7(customerId="c-1")',
  ),
  row('a row action on the wrong entity', 'e1("b-1").m4', 'unknown_relation', 'e2(1).m4'),
  // Projections.
  row('a dotted projection', 'e2(7)[name, brewery.name]', 'syntax_error', 'e2(7)[name, brewery[name]]'),
  row('the [..] placeholder copied', 'e1(city="Berlin")[..]', 'syntax_error', 'e1(city="Berlin")'),
  row('a star projection', 'e1(city="Berlin")[*]', 'unexpected_character', 'e1(city="Berlin")'),
  row(
    'a projection before a relation',
    'e1(city="Berlin")[name].beers',
    'syntax_error',
    'e1(city="Berlin").beers[name]',
  ),
  row('a field written as a nest', 'e2(style="IPA")[name[first]]', 'syntax_error', 'write just `name`'),
  row('limit= on a nested row', 'e2(style="IPA")[name, brewery(limit=5)[name]]', 'unknown_argument', 'remove limit'),
  row(
    'a nested relation of a write',
    'm3(breweryId="b-1", name="X", style="IPA", abv=5)[id, brewery[name]]',
    'syntax_error',
    'e1(x.id)[id, rel[..]]',
  ),
  row('a field typo in a projection', 'e1(city="Berlin")[nmae]', 'projection_unknown_field', 'did you mean `name`?'),
  row(
    'an unknown field in a projection',
    'e1(city="Berlin")[name,phone]',
    'projection_unknown_field',
    'fields or relations: `id`, `name`, `city`',
  ),
  // Names of entities and capabilities.
  row('an entity by its name', 'Beer(style="IPA")', 'unknown_symbol', 'did you mean `e2` (brewery:Beer)?'),
  row(
    'an entity by its name in lower case',
    'beer(style="IPA")',
    'unknown_symbol',
    'did you mean `e2` (brewery:Beer)?',
  ),
  row('an entity in the plural', 'Tickets(status="open")', 'unknown_symbol', 'did you mean `e4` (helpdesk:Ticket)?'),
  row(
    'a qualified name in the plural',
    'brewery:Beers(style="IPA")',
    'unknown_symbol',
    'did you mean `e2` (brewery:Beer)?',
  ),
  row(
    'a qualified name in lower case',
    'brewery:beer(style="IPA")',
    'unknown_symbol',
    'did you mean `e2` (brewery:Beer)?',
  ),
  row('a qualified name with a dot', 'brewery.Beer(style="IPA")', 'unknown_symbol', 'brewery:Beer(style="IPA")'),
  row('a qualified name with a capital api', 'Brewery:Beer(style="IPA")', 'syntax_error', 'brewery:Beer'),
  row('an entity the session has not exposed', 'Customer', 'unknown_symbol', '`helpdesk:Customer`'),
  row(
    'a capability by its name',
    'createBeer(breweryId="b-1", name="Dark", style="Stout", abv=5.2)',
    'unknown_symbol',
    '`m3` (brewery:createBeer)',
  ),
  row('a default read by its name', 'listBreweries(city="Berlin")', 'unknown_symbol', '`e1` (brewery:Brewery)'),
  row(
    'a symbol past the last one',
    'e9(city="Berlin")',
    'unknown_symbol',
    'did you mean one of: `e1` (brewery:Brewery)',
  ),
  row(
    'a legacy parameter symbol',
    'e1(p1="Berlin")',
    'legacy_symbol',
    'parameters use wire names: city, country, kind',
  ),
  row('a legacy symbol at the head', 'p1(city="Berlin")', 'legacy_symbol', 'e1(city="Berlin")'),
  row('a legacy transport slot', 's0(city="Berlin")', 'legacy_slot', 'entity symbol (e1)'),
  row('an entity of another catalog', 'brewery:Customer', 'unknown_symbol', '`helpdesk:Customer`'),
  row(
    'a number given to a name the list cannot filter',
    'e1(nope=1)',
    'unknown_argument',
    'parameters: `city`, `country`, `kind`',
  ),
  // Values.
  row('a number for text', 'm1(name=123, city="Y", country="DE")', 'wrong_type', 'name="123"'),
  row('a whole decimal for an integer', 'e3(rating=4.0)', 'wrong_type', 'rating=4'),
  row('a number in quotes', 'm1(name="X", city="Y", country="DE", founded="1999")', 'wrong_type', 'founded=1999'),
  row('a boolean in quotes', 'e2(available="true")', 'wrong_type', 'available=true'),
  row('a word for a boolean', 'e2(available="yes")', 'wrong_type', 'available=true'),
  row('an integer id in quotes', 'e2("7")', 'wrong_type', 'e2(7)'),
  row('a rating in quotes', 'm6(beerId=7, rating="5", author="ana")', 'wrong_type', 'rating=5'),
  row(
    'an enum value not in the list',
    'e1(kind="nano")',
    'enum_value_not_allowed',
    'allowed: micro, brewpub, regional, large',
  ),
  row('an enum value in the wrong case', 'e4(status="Open")', 'enum_value_not_allowed', 'status="open"'),
  row('a text without quotes', 'e1(city=Berlin)', 'unknown_binding', 'city="Berlin"'),
  row('a binding not made yet', 'e2(breweryId=b.id)', 'unknown_binding', 'b = e1(...)'),
  row('a list of ids', 'e1(["b-1", "b-2"])', 'wrong_type', 'e1("b-1")'),
  row('two ids at once', 'e1("b-1", "b-2")', 'syntax_error', 'e1("b-2")'),
  row('limit zero', 'e1(limit=0)', 'wrong_type', 'leave limit out'),
  row('limit too large', 'e1(limit=20000)', 'wrong_type', 'limit=10000'),
  row('limit in quotes', 'e1(limit="50")', 'wrong_type', 'limit=50'),
  // Required arguments.
  row(
    'a create missing arguments',
    'm3(breweryId="b-1", name="Dark")',
    'missing_argument',
    'm3(breweryId="b-1", name="Dark", style="text", abv=2.5)',
  ),
  row('an update not on a row', 'm9(status="closed")', 'missing_argument', 'e4("<id>").m9(status="closed")'),
  // JSON, SQL and operators.
  row('a JSON object as the arguments', 'e1({city:"Berlin"})', 'wrong_type', 'e1(city="Berlin")'),
  row(
    'a JSON object with quoted keys',
    'e1({"city": "Berlin", "kind": "micro"})',
    'wrong_type',
    'e1(city="Berlin", kind="micro")',
  ),
  row(
    'a JSON object for a capability',
    'm3({breweryId: "b-1", name: "Dark", style: "Stout", abv: 5.2})',
    'syntax_error',
    'm3(breweryId="b-1", name="Dark", style="Stout", abv=5.2)',
  ),
  row('colons for arguments', 'e2(style: "IPA")', 'syntax_error', 'style="IPA"'),
  row('SQL', 'SELECT name FROM e1 WHERE city = "Berlin"', 'syntax_error', 'e1(city="Berlin")[name]'),
  row(
    'SQL with a star and single quotes',
    "select * from e2 where style = 'IPA'",
    'unexpected_character',
    'e2(style="IPA")',
  ),
  row('== for equality', 'e1(city=="Berlin")', 'syntax_error', 'e1(city="Berlin")'),
  row('a comparison', 'e3(rating>=4)', 'unexpected_character', 'rating=4'),
  row('single quotes', "e1(city='Berlin')", 'unexpected_character', '"Berlin"'),
  row('a teaching placeholder left in', 'e1(city=$)', 'unexpected_character', 'replace `$` with a value'),
  row('an escaped newline', 'e1(city="Berlin")[name]\\ne2(style="IPA")', 'unexpected_character', 'a real line break'),
  row(
    'SQL with AND and LIMIT',
    "select name, city from e1 where country = 'DE' and kind = 'micro' limit 5",
    'unexpected_character',
    'e1(country="DE", kind="micro", limit=5)[name,city]',
  ),
  // Punctuation and brackets.
  row('a leading comma', 'e1(,city="Berlin")', 'syntax_error', 'e1(city="Berlin")'),
  row('two commas', 'e1(city="Berlin",,kind="micro")', 'syntax_error', 'e1(city="Berlin",kind="micro")'),
  row('a missing comma', 'e1(city="Berlin" kind="micro")', 'syntax_error', 'expected `,`'),
  row('an unclosed argument list', 'e1(city="Berlin"', 'syntax_error', '`)` to close the argument list'),
  row('an unclosed projection', 'e1(city="Berlin")[name,city', 'syntax_error', '`]` to close the projection'),
  row('an extra bracket', 'e1(city="Berlin"))', 'syntax_error', 'remove it'),
  row('an unterminated string', 'e1(city="Berlin)', 'unterminated_string', '"Berlin")'),
  // Heredocs.
  row(
    'text after the heredoc tag',
    'm6(beerId=7, rating=4, author="ana", text=<<EOT Crisp\nEOT)',
    'syntax_error',
    'start the text on the next line',
  ),
  row(
    'a space in the heredoc opener',
    'm6(beerId=7, rating=4, author="ana", text=<< EOT\nCrisp\nEOT)',
    'heredoc_missing_tag',
    '<<EOT',
  ),
  row(
    'a space before the glued close',
    'm6(beerId=7, rating=4, author="ana", text=<<EOT\nCrisp\nEOT )',
    'unterminated_heredoc',
    'EOT)',
  ),
  row(
    'the removed triple quotes',
    'm6(beerId=7, rating=4, author="ana", text="""\nCrisp\n""")',
    'legacy_heredoc',
    '<<EOT',
  ),
  row(
    'a heredoc closed in another case',
    'm6(beerId=7, rating=4, author="ana", text=<<EOT\nCrisp\neot\n)',
    'unterminated_heredoc',
    'written exactly as opened, EOT',
  ),
  // Continuations.
  row('a page of an operation handle', 'page(o1)', 'bad_handle', 'wait(o1)'),
  row('waiting on a page handle', 'wait(pg1)', 'bad_handle', 'page(pg1)'),
  row('a quoted handle', 'page("pg1")', 'bad_handle', 'page(pg1)'),
  row('a relation after a page', 'page(pg1).beers', 'syntax_error', 'page(pg1)'),
  row(
    'a continuation with other statements',
    'e1(city="Berlin")\nwait(o1)',
    'continuation_not_alone',
    'send `wait(o1)` on its own',
  ),
  // Writes.
  row('a read after a write', 'm1(name="X", city="Y", country="DE").r1', 'write_in_read_position', 'x = m1(...)'),
  row('a projection of a delete', 'e2(7).m5[name]', 'projection_unknown_field', 'remove the projection'),
  // Constraints, lists for `many` parameters, at least one field of an update.
  row(
    'a rating above the scale',
    'm6(beerId=7, rating=9, author="ana")',
    'constraint_violation',
    'm6(beerId=7, rating=5, author="ana")',
  ),
  row('a rating below the scale', 'm6(beerId=7, rating=0, author="ana")', 'constraint_violation', 'rating=1'),
  row('an update that changes nothing', 'e4("t-1").m9', 'missing_argument', 'e4("t-1").m9(subject="text")'),
  row('an update with empty parentheses', 'e1("b-1").m2()', 'missing_argument', 'e1("b-1").m2(name="text")'),
  row('an empty list for a filter', 'e2(style=[])', 'wrong_type', 'leave style out'),
  row('a number in a list of texts', 'e2(style=["IPA", 5])', 'wrong_type', 'style=["IPA", "5"]'),
  row(
    'a misspelt value in a list of enum values',
    'e4(status=["open", "closd"])',
    'enum_value_not_allowed',
    'status="closed"',
  ),
];

const registry = await fixtureRegistry();
const symbols = sessionSymbols(registry);

t.ok(ROWS.length >= 40, `${ROWS.length} wrong programs (at least 40)`);
t.equal(new Set(ROWS.map((r) => r.program)).size, ROWS.length, 'every program is in the table once');

for (const r of ROWS) {
  t.test(`${r.mistake}: ${JSON.stringify(r.program)}`, async (t) => {
    const c = compileProgram(r.program, { registry, symbols });
    t.equal(c.kind, 'error', 'is rejected');
    const d = c.diagnostics[0];
    t.equal(d?.code, r.code, 'code');
    t.ok(d?.span, 'has a position');
    t.ok(d?.hint?.includes(r.fix), `the hint names the fix ${JSON.stringify(r.fix)}; got ${JSON.stringify(d?.hint)}`);
    t.ok((d?.hint?.length ?? 0) <= 300, 'the hint fits the 300-character bound');
  });
}

/**
 * The grammar of one statement (see grammar.md, "Grammar"), as a pure Chevrotain `CstParser`:
 * no actions, no semantics. `ast-builder.ts` turns its CST into the AST; `parse.ts` feeds it one
 * statement at a time and turns its errors into diagnostics. One shared instance, reused.
 */
import type { IParserErrorMessageProvider, TokenType } from 'chevrotain';
import { CstParser } from './chevrotain.js';
import {
  allTokens,
  Colon,
  Comma,
  Dot,
  Equals,
  False,
  Heredoc,
  Identifier,
  LBrace,
  LBracket,
  LParen,
  Null,
  NumberLit,
  Qualified,
  RBrace,
  RBracket,
  RParen,
  StringLit,
  True,
} from './tokens.js';

/**
 * What went wrong, as the parser reports it (JSON in the Chevrotain error message;
 * `syntax-error.ts` words it for people). Token types are given by name.
 */
export type ParseFailure =
  { kind: 'mismatch'; expected: string[] } | { kind: 'alternatives'; paths: string[][] } | { kind: 'leftover' };

const names = (path: TokenType[]): string[] => path.map((t) => t.name);

const structuredErrors: IParserErrorMessageProvider = {
  buildMismatchTokenMessage: ({ expected }) =>
    JSON.stringify({ kind: 'mismatch', expected: [expected.name] } satisfies ParseFailure),
  buildNotAllInputParsedMessage: () => JSON.stringify({ kind: 'leftover' } satisfies ParseFailure),
  buildNoViableAltMessage: ({ expectedPathsPerAlt }) =>
    JSON.stringify({
      kind: 'alternatives',
      paths: expectedPathsPerAlt.flatMap((alt) => alt.map(names)),
    } satisfies ParseFailure),
  buildEarlyExitMessage: ({ expectedIterationPaths }) =>
    JSON.stringify({ kind: 'alternatives', paths: expectedIterationPaths.map(names) } satisfies ParseFailure),
};

export class StatementParser extends CstParser {
  constructor() {
    super(allTokens, { maxLookahead: 2, recoveryEnabled: false, errorMessageProvider: structuredErrors });
    this.performSelfAnalysis();
  }

  /** statement = binding | chain */
  statement = this.RULE('statement', () => {
    this.OR([{ ALT: () => this.SUBRULE(this.binding) }, { ALT: () => this.SUBRULE(this.chain) }]);
  });

  /** binding = bindingName "=" chain  (reserved words are accepted here and rejected by the builder) */
  binding = this.RULE('binding', () => {
    this.OR([
      { ALT: () => this.CONSUME(Identifier) },
      { ALT: () => this.CONSUME(True) },
      { ALT: () => this.CONSUME(False) },
      { ALT: () => this.CONSUME(Null) },
    ]);
    this.CONSUME(Equals);
    this.SUBRULE(this.chain);
  });

  /** chain = call { "." call } [ projection ] */
  chain = this.RULE('chain', () => {
    this.SUBRULE(this.call);
    this.MANY(() => {
      this.CONSUME(Dot);
      this.SUBRULE2(this.call);
    });
    this.OPTION(() => this.SUBRULE(this.projection));
  });

  /** call = ( Identifier | Qualified ) [ args ] */
  call = this.RULE('call', () => {
    this.OR([{ ALT: () => this.CONSUME(Identifier) }, { ALT: () => this.CONSUME(Qualified) }]);
    this.OPTION(() => this.SUBRULE(this.args));
  });

  /** args = "(" [ arg { "," arg } [ "," ] ] ")" */
  args = this.RULE('args', () => {
    this.CONSUME(LParen);
    this.OPTION(() => {
      this.SUBRULE(this.arg);
      this.MANY(() => {
        this.CONSUME(Comma);
        this.SUBRULE2(this.arg);
      });
      this.OPTION2(() => this.CONSUME2(Comma));
    });
    this.CONSUME(RParen);
  });

  /** arg = Identifier "=" value | value */
  arg = this.RULE('arg', () => {
    this.OR([
      {
        ALT: () => {
          this.CONSUME(Identifier);
          this.CONSUME(Equals);
          this.SUBRULE(this.value);
        },
      },
      { ALT: () => this.SUBRULE2(this.value) },
    ]);
  });

  /** value = String | Heredoc | Number | true | false | null | list | object | ref */
  value = this.RULE('value', () => {
    this.OR([
      { ALT: () => this.CONSUME(StringLit) },
      { ALT: () => this.CONSUME(Heredoc) },
      { ALT: () => this.CONSUME(NumberLit) },
      { ALT: () => this.CONSUME(True) },
      { ALT: () => this.CONSUME(False) },
      { ALT: () => this.CONSUME(Null) },
      { ALT: () => this.SUBRULE(this.list) },
      { ALT: () => this.SUBRULE(this.object) },
      { ALT: () => this.SUBRULE(this.ref) },
    ]);
  });

  /** list = "[" [ value { "," value } [ "," ] ] "]" */
  list = this.RULE('list', () => {
    this.CONSUME(LBracket);
    this.OPTION(() => {
      this.SUBRULE(this.value);
      this.MANY(() => {
        this.CONSUME(Comma);
        this.SUBRULE2(this.value);
      });
      this.OPTION2(() => this.CONSUME2(Comma));
    });
    this.CONSUME(RBracket);
  });

  /** object = "{" [ entry { "," entry } [ "," ] ] "}" */
  object = this.RULE('object', () => {
    this.CONSUME(LBrace);
    this.OPTION(() => {
      this.SUBRULE(this.entry);
      this.MANY(() => {
        this.CONSUME(Comma);
        this.SUBRULE2(this.entry);
      });
      this.OPTION2(() => this.CONSUME2(Comma));
    });
    this.CONSUME(RBrace);
  });

  /**
   * entry = ( Identifier | String ) ":" value | Qualified [ "." Identifier ]
   * The second form is `{key:name}` written without a space, which lexes as one qualified token.
   */
  entry = this.RULE('entry', () => {
    this.OR([
      {
        ALT: () => {
          this.OR2([{ ALT: () => this.CONSUME(Identifier) }, { ALT: () => this.CONSUME(StringLit) }]);
          this.CONSUME(Colon);
          this.SUBRULE(this.value);
        },
      },
      {
        ALT: () => {
          this.CONSUME(Qualified);
          this.OPTION(() => {
            this.CONSUME(Dot);
            this.CONSUME2(Identifier);
          });
        },
      },
    ]);
  });

  /** ref = Identifier [ "." Identifier ] */
  ref = this.RULE('ref', () => {
    this.CONSUME(Identifier);
    this.OPTION(() => {
      this.CONSUME(Dot);
      this.CONSUME2(Identifier);
    });
  });

  /** projection = "[" item { "," item } [ "," ] "]" */
  projection = this.RULE('projection', () => {
    this.CONSUME(LBracket);
    this.SUBRULE(this.item);
    this.MANY(() => {
      this.CONSUME(Comma);
      this.SUBRULE2(this.item);
    });
    this.OPTION(() => this.CONSUME2(Comma));
    this.CONSUME(RBracket);
  });

  /** item = Identifier [ args ] [ projection ]: a field, or a relation to nest */
  item = this.RULE('item', () => {
    this.CONSUME(Identifier);
    this.OPTION(() => this.SUBRULE(this.args));
    this.OPTION2(() => this.SUBRULE(this.projection));
  });
}

/** The one shared parser instance (Chevrotain parsers are built once and reused). */
export const statementParser = new StatementParser();

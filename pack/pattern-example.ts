/**
 * A string that matches a regular expression, for the example values of parameters with a
 * `pattern` (pack/param-constraints.ts `constraintExample`): an id pattern such as
 * `^IS[0-9a-fA-F]{32}$` or `^arn:aws:[a-z0-9-]+:\w{12}:.+$` gets `IS000…0` and
 * `arn:aws:a:aaaaaaaaaaaa:a`. Each atom is taken the fewest times its quantifier allows (once for
 * `+`), a group by its first alternative, a class by its first character. Lookarounds and
 * backreferences are not followed (undefined); the caller checks every sample against the pattern.
 */

/** A sample of `pattern`, or undefined when the pattern uses what this reader does not follow. */
export function patternExample(pattern: string): string | undefined {
  const r = new Reader(pattern);
  try {
    const out = r.alternatives();
    return r.done() ? out : undefined;
  } catch {
    return undefined;
  }
}

/** The sample of an escape outside or inside a class (`\d` -> `1`), or undefined for a literal. */
const CLASS_ESCAPES: Record<string, string> = { d: '1', D: 'a', w: 'a', W: '-', s: ' ', S: 'a' };
const CONTROL: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', '0': '\0' };

/** Thrown where the pattern needs more than a sample can give (a lookaround, a backreference). */
class Unreadable extends Error {}

class Reader {
  private at = 0;
  constructor(private readonly src: string) {}

  done(): boolean {
    return this.at >= this.src.length;
  }

  private peek(): string | undefined {
    return this.src[this.at];
  }

  private next(): string {
    const c = this.src[this.at++];
    if (c === undefined) throw new Unreadable('the pattern ends early');
    return c;
  }

  /** `a|b|c` up to a `)` or the end: the first alternative's sample (the others are read past). */
  alternatives(): string {
    const first = this.sequence();
    while (this.peek() === '|') {
      this.at++;
      this.sequence();
    }
    return first;
  }

  private sequence(): string {
    let out = '';
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) {
      const atom = this.atom();
      out += atom.repeat(this.quantifier());
    }
    return out;
  }

  private atom(): string {
    const c = this.next();
    switch (c) {
      case '^':
      case '$':
        return '';
      case '.':
        return 'a';
      case '(':
        return this.group();
      case '[':
        return this.charClass();
      case '\\':
        return this.escape(false);
      default:
        return c;
    }
  }

  private group(): string {
    if (this.peek() === '?') {
      this.at++;
      const kind = this.next();
      if (kind === '<' && /[A-Za-z_]/.test(this.peek() ?? '')) {
        while (this.next() !== '>');
      } else if (kind !== ':') throw new Unreadable('a lookaround');
    }
    const out = this.alternatives();
    if (this.next() !== ')') throw new Unreadable('an unclosed group');
    return out;
  }

  /** `[...]`: its first character, or for `[^...]` a common character it leaves out. */
  private charClass(): string {
    const from = this.at - 1;
    const negated = this.peek() === '^';
    if (negated) this.at++;
    const members: Array<string | [string, string]> = [];
    let first = true;
    for (;;) {
      const c = this.next();
      if (c === ']' && !first) break;
      first = false;
      const lo = c === '\\' ? this.escape(true) : c;
      if (this.peek() === '-' && this.src[this.at + 1] !== ']' && this.src[this.at + 1] !== undefined) {
        this.at++;
        const h = this.next();
        members.push([lo, h === '\\' ? this.escape(true) : h]);
      } else members.push(lo);
    }
    if (!negated) {
      const m = members[0];
      if (m === undefined) throw new Unreadable('an empty class');
      return typeof m === 'string' ? m : m[0];
    }
    // What a negated class leaves out is read by the class itself (`[^\\s\\S]` leaves out everything).
    let cls: RegExp;
    try {
      cls = new RegExp(this.src.slice(from, this.at), 'u');
    } catch {
      throw new Unreadable('a class the platform does not read');
    }
    const free = [...'a1x_-.Z9 '].find((ch) => cls.test(ch));
    if (free === undefined) throw new Unreadable('a class that leaves out every sample');
    return free;
  }

  private escape(inClass: boolean): string {
    const c = this.next();
    if (c in CLASS_ESCAPES) return CLASS_ESCAPES[c]!;
    if (c in CONTROL) return CONTROL[c]!;
    if (c === 'b' || c === 'B') {
      if (inClass) return '\b';
      return '';
    }
    if (/[1-9]/.test(c) || c === 'k') throw new Unreadable('a backreference');
    if (c === 'x') return String.fromCharCode(parseInt(this.take(2), 16));
    if (c === 'u') return String.fromCharCode(parseInt(this.take(4), 16));
    if (c === 'p' || c === 'P') throw new Unreadable('a Unicode property');
    return c;
  }

  private take(n: number): string {
    const s = this.src.slice(this.at, this.at + n);
    if (!/^[0-9A-Fa-f]+$/.test(s) || s.length !== n) throw new Unreadable('a bad hex escape');
    this.at += n;
    return s;
  }

  /** How many times the atom before is taken: the fewest its quantifier allows (`+` once). */
  private quantifier(): number {
    let n: number;
    const c = this.peek();
    if (c === '*' || c === '?' || c === '+') {
      n = c === '+' ? 1 : 0;
      this.at++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,\d*)?\}/.exec(this.src.slice(this.at));
      if (!m) return 1; // a literal `{`, read as the next atom
      n = Number(m[1]);
      this.at += m[0].length;
    } else return 1;
    if (this.peek() === '?') this.at++; // lazy
    return n;
  }
}

/** The indefinite article of a word in a message: `an integer`, `a string`. */

/**
 * `word` after `a` or, when it starts with a vowel letter, `an`.
 *
 * @example article('integer') // 'an integer'
 */
export function article(word: string): string {
  return /^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`;
}

/**
 * The playground's saved state (web/src/components/saved.ts): the editor text, saved on every
 * keystroke with `saveSoon`, is written once the typing pauses, not once per key; a `save` in
 * between (the session closed, say) writes what was held back first, so it is not lost and does
 * not come back over the newer patch.
 */
import t from 'tap';

/** A sessionStorage of one tab that counts its writes. */
const items = new Map<string, string>();
let writes = 0;
Object.assign(globalThis, {
  sessionStorage: {
    getItem: (k: string) => items.get(k) ?? null,
    setItem: (k: string, v: string) => {
      writes++;
      items.set(k, v);
    },
    removeItem: (k: string) => items.delete(k),
  },
});
/** What the test uses of saved.ts (imported by a path held in a variable: that module needs the DOM's types, these tests' typecheck has node's). */
interface SavedModule {
  readSaved(): Record<string, unknown>;
  save(patch: Record<string, unknown>): void;
  saveSoon(patch: Record<string, unknown>): void;
  forgetSession(): void;
}
const SAVED = '../../web/src/components/saved.js';
const { readSaved, save, saveSoon, forgetSession } = (await import(SAVED)) as SavedModule;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('typing is saved once it pauses, not once per key', async (t) => {
  save({ entry: 'brewery' });
  const before = writes;
  for (const text of ['e', 'e1', 'e1[', 'e1[name', 'e1[name]']) saveSoon({ program: text });
  t.equal(writes, before, 'nothing written while typing');
  t.equal(readSaved().program, undefined);
  await pause(450);
  t.equal(writes, before + 1, 'one write after the pause');
  t.same(readSaved(), { entry: 'brewery', program: 'e1[name]' });
});

t.test('a save in between writes the held-back text first, and the newer patch wins', async (t) => {
  saveSoon({ program: 'e2[name]' });
  save({ intent: 'beers' });
  t.same(readSaved(), { entry: 'brewery', intent: 'beers', program: 'e2[name]' }, 'written together');
  saveSoon({ program: 'e3' });
  forgetSession();
  t.equal(readSaved().program, undefined, 'a forgotten session does not get its text back');
  const after = writes;
  await pause(450);
  t.equal(writes, after, 'nothing left to write');
  t.equal(readSaved().program, undefined);
});

import t from 'tap';
import { readFile } from 'node:fs/promises';
import { errnoCode } from '../../pack/errno.js';

t.test('errnoCode: the code of a file-system error, else `error`', async (t) => {
  t.equal(errnoCode(await readFile('/nonexistent/svc-errno-test').catch((e: unknown) => e)), 'ENOENT');
  t.equal(errnoCode(await readFile('/').catch((e: unknown) => e)), 'EISDIR');
  t.equal(errnoCode(new Error('plain')), 'error');
  t.equal(errnoCode(Object.assign(new Error('odd'), { code: 42 })), 'error', 'a non-string code is not trusted');
  t.equal(errnoCode('ENOENT'), 'error', 'not an error object');
  t.equal(errnoCode(null), 'error');
});

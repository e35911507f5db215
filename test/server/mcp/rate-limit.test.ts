/**
 * The per-address limit of new MCP sessions (server/mcp/rate-limit.ts), on its own with a clock
 * of the test's: a minute's worth at once, then one as each refills, 0 is off, an IPv6 client is
 * counted by its /64, and a flood of addresses holds no more buckets than the bound.
 */
import t from 'tap';
import { addressKey, NewSessionLimit } from '../../../server/mcp/rate-limit.js';

t.test("a minute's worth at once, then one as the bucket refills", async (t) => {
  let clock = 0;
  const limit = new NewSessionLimit({ perMinute: 6, now: () => clock });
  for (let i = 0; i < 6; i++) t.same(limit.take('10.0.0.1'), { ok: true }, `session ${i + 1}`);
  const refused = limit.take('10.0.0.1');
  t.equal(refused.ok, false, 'the seventh is refused');
  t.equal(!refused.ok && refused.retryAfterSecs, 10, 'Retry-After: one token comes back every 10 s');
  t.match(!refused.ok && refused.message, /6 a minute, SVC_MCP_NEW_SESSIONS_PER_MIN/);
  t.same(limit.take('10.0.0.2'), { ok: true }, 'another address has its own bucket');
  clock += 9_000;
  t.equal(limit.take('10.0.0.1').ok, false, 'not yet');
  clock += 1_000;
  t.same(limit.take('10.0.0.1'), { ok: true }, 'a token came back');
  t.equal(limit.take('10.0.0.1').ok, false, 'only one');
  const off = new NewSessionLimit({ perMinute: 0, now: () => clock });
  for (let i = 0; i < 1_000; i++) off.take('10.0.0.1');
  t.same(off.take('10.0.0.1'), { ok: true }, '0: no limit');
  t.equal(off.size, 0, 'and nothing remembered');
});

t.test('address keys: IPv4, IPv4-mapped IPv6, IPv6 by its /64', async (t) => {
  t.equal(addressKey('192.0.2.7'), '192.0.2.7');
  t.equal(addressKey('::ffff:192.0.2.7'), '192.0.2.7');
  t.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  t.equal(addressKey('2001:0db8:0001:0002:ffff:1:2:3'), '2001:db8:1:2::/64', 'leading zeros');
  t.equal(addressKey('2001:db8::5'), '2001:db8:0:0::/64', ':: expanded');
  t.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64', 'zone id dropped');
  t.equal(addressKey('::1'), '0:0:0:0::/64');
  t.equal(addressKey(undefined), '');
  const clock = 0;
  const limit = new NewSessionLimit({ perMinute: 2, now: () => clock });
  t.equal(limit.take('2001:db8:1:2::a').ok, true);
  t.equal(limit.take('2001:db8:1:2::b').ok, true);
  t.equal(limit.take('2001:db8:1:2:ffff::c').ok, false, 'a third address of the same /64 is refused');
  t.equal(limit.take('2001:db8:1:3::a').ok, true, 'the next /64 is not');
});

t.test('a flood of addresses holds no more buckets than the bound', async (t) => {
  const clock = 0;
  const limit = new NewSessionLimit({ perMinute: 1, maxAddresses: 100, now: () => clock });
  t.equal(limit.take('10.9.9.9').ok, true, 'a client takes its one session');
  let refused = true;
  for (let i = 0; i < 20_000; i++) {
    limit.take(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    if (i % 50 === 0 && limit.take('10.9.9.9').ok) refused = false;
    if (limit.size > 100) return t.fail(`${limit.size} buckets after ${i + 1} addresses`);
  }
  t.equal(limit.size, 100, 'the bound');
  t.ok(refused, 'an address seen often keeps its bucket (it is still refused)');
});

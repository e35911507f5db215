/**
 * The Lua scripts of the Redis session repository, each one atomic on the server, and the key
 * layout they share (prefix `P`, `svc:` by default; `m` is a session's key text `prompt_hash/session`):
 *
 *   P s:<m>     hash   v (version: +1 on every write), st (the core: state JSON without page handles,
 *                      tokens, runs and counters), sv (the version that last wrote st), lu (last
 *                      used, ms of the repository clock), run ('1' while an operation runs), t
 *                      (tenant), lg (logical refs, a JSON array), pc pg o (the counters)
 *   P pg:<m>    hash   page handle pgN -> its JSON
 *   P pc:<m>    hash   plan token pcN -> its JSON
 *   P ru:<m>    list   run records (JSON), oldest first
 *   P j:<m>     list   the journal: what each of the last JOURNAL_MAX writes changed, one entry per
 *                      version (the last entry is version v), so a replica holding an older version
 *                      catches up without reading the session in full (redis-items.ts)
 *   P lru       zset   every session's m, scored by lu (least recently used first)
 *   P t:<tenant> zset  the tenant's sessions, scored by lu
 *   P l:<ref>   string the m a logical ref is bound to
 *
 * Scripts that need the clock and limits take ARGV 1-4 = prefix, now, idleMs, ttlMs. They build
 * session, tenant and ref key names from the prefix, so they need a single Redis (or a primary with
 * replicas), not Redis Cluster. Every touch refreshes a real TTL (ttlMs = idleMs + a margin) on the
 * session's keys, both sorted sets and the session's refs: a garbage-collection backstop only, since
 * idle expiry follows the repository clock; index entries left by an expired hash are removed when
 * the sweep or an eviction meets them.
 *
 * Idle expiry follows the repository's clock, as in memory. Redis's own expiry (idleMs + 5 minutes,
 * refreshed on each touch for every key of the session) only collects what nobody touches any
 * more. A session with a running operation is kept past idleMs by the clock; its owner writes
 * progress and renews the operation's lease through `update` every few seconds, which touches it
 * and so refreshes the TTL: only a session whose owner stopped (and nobody read since) expires in
 * Redis.
 *
 * Caps: `create` runs one script that sweeps, then evicts least recently used sessions that run no
 * operation (per tenant, then in all) or refuses with `too_many_sessions`. Each session's hash has
 * a run flag, so eviction never decodes a state. The script is atomic, so replicas creating
 * sessions at once never exceed a cap; what is approximate across replicas is which session goes:
 * LRU scores come from each replica's clock, ties within one millisecond are broken by key text,
 * and a session whose operation is being started elsewhere (not yet written) may be evicted, that
 * start then failing with `unknown_session`.
 */

/** Writes whose journal entries a session keeps. */
export const JOURNAL_MAX = 64;

/** Shared helpers, prepended to the scripts that need them. */
const LIB = `
local P, NOW, IDLE, TTL = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local LRU = P .. 'lru'
local function skey(m) return P .. 's:' .. m end
-- The keys of a session's items and journal.
local function ikeys(m) return {P .. 'pg:' .. m, P .. 'pc:' .. m, P .. 'ru:' .. m, P .. 'j:' .. m} end
local function tkey(t) return P .. 't:' .. t end
local function lkey(r) return P .. 'l:' .. r end
local function refs(lg)
  if not lg or lg == '' then return {} end
  return cjson.decode(lg)
end
local function idle(lu, run) return NOW - tonumber(lu) > IDLE and run ~= '1' end
-- Drop session m: its hash, both index entries, and its refs that still point at it.
local function drop(m)
  local h = redis.call('HMGET', skey(m), 't', 'lg')
  if h[1] then redis.call('ZREM', tkey(h[1]), m) end
  for _, r in ipairs(refs(h[2])) do
    if redis.call('GET', lkey(r)) == m then redis.call('DEL', lkey(r)) end
  end
  redis.call('DEL', skey(m), unpack(ikeys(m)))
  redis.call('ZREM', LRU, m)
end
-- Remove an index entry of zset z whose session hash is gone (its TTL ran out).
local function stale(z, m)
  redis.call('ZREM', z, m)
  redis.call('ZREM', LRU, m)
end
-- Drop every session idle by the clock that runs no operation, least recently used first.
local function sweep()
  local kept = 0
  while true do
    local ms = redis.call('ZRANGEBYSCORE', LRU, '-inf', '(' .. (NOW - IDLE), 'LIMIT', kept, 128)
    if #ms == 0 then return end
    for _, m in ipairs(ms) do
      local run = redis.call('HGET', skey(m), 'run')
      if not run then stale(LRU, m) elseif run ~= '1' then drop(m) else kept = kept + 1 end
    end
  end
end
`;

/**
 * Read and touch a session at once. KEYS: none. ARGV 5: m, 6: the version the caller holds ('' for
 * none). Returns nil (none, or idle by the clock and running nothing: then it is dropped); {v} when
 * the caller holds v already (nothing is sent again); {v, 'j', st or '', pc, pg, o, entries} when
 * the journal holds every write after the caller's version (st only when it changed since); else
 * {v, 'f', st, pc, pg, o, page handles (name, JSON, ...), tokens (name, JSON, ...), runs}.
 */
const TOUCH = `${LIB}
local m, held = ARGV[5], ARGV[6]
local k = skey(m)
local h = redis.call('HMGET', k, 'v', 'sv', 'lu', 'run', 't', 'lg', 'pc', 'pg', 'o')
if not h[1] then return false end
if idle(h[3], h[4]) then
  drop(m)
  return false
end
redis.call('HSET', k, 'lu', ARGV[2])
redis.call('PEXPIRE', k, TTL)
local ik = ikeys(m)
for _, x in ipairs(ik) do redis.call('PEXPIRE', x, TTL) end
local tk = tkey(h[5])
for _, z in ipairs({LRU, tk}) do
  redis.call('ZADD', z, ARGV[2], m)
  redis.call('PEXPIRE', z, TTL)
end
for _, r in ipairs(refs(h[6])) do redis.call('PEXPIRE', lkey(r), TTL) end
if h[1] == held then return {h[1]} end
local v, from = tonumber(h[1]), tonumber(held)
if from and from < v and v - from <= redis.call('LLEN', ik[4]) then
  local st = ''
  if tonumber(h[2]) > from then st = redis.call('HGET', k, 'st') end
  return {h[1], 'j', st, h[7], h[8], h[9], redis.call('LRANGE', ik[4], from - v, -1)}
end
return {h[1], 'f', redis.call('HGET', k, 'st'), h[7], h[8], h[9], redis.call('HGETALL', ik[1]),
  redis.call('HGETALL', ik[2]), redis.call('LRANGE', ik[3], 0, -1)}
`;

/**
 * Compare-and-set a session: write what a change did. KEYS: the session hash, its page handles,
 * tokens, runs and journal. ARGV 1: expected version, 2: the core JSON ('' when unchanged), 3: run
 * flag, 4: logical refs JSON (both with the core only), 5-7: the counters pc, pg, o, 8: ttlMs,
 * 9...: ops, three arguments each (redis-items.ts), also appended to the journal as one entry.
 * Returns 1 (written), 0 (the version moved on: another process wrote first) or -1 (gone).
 */
const WRITE = `
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return -1 end
if v ~= ARGV[1] then return 0 end
local nv, ttl = tonumber(v) + 1, tonumber(ARGV[8])
redis.call('HSET', KEYS[1], 'v', nv, 'pc', ARGV[5], 'pg', ARGV[6], 'o', ARGV[7])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'st', ARGV[2], 'sv', nv, 'run', ARGV[3], 'lg', ARGV[4]) end
local moved = {}
for i = 9, #ARGV, 3 do
  local op, name, val = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if op == 'p' then redis.call('HSET', KEYS[2], name, val) moved[2] = true
  elseif op == 'p-' then redis.call('HDEL', KEYS[2], name)
  elseif op == 'k' then redis.call('HSET', KEYS[3], name, val) moved[3] = true
  elseif op == 'k-' then redis.call('HDEL', KEYS[3], name)
  elseif op == 'r' then redis.call('RPUSH', KEYS[4], val) moved[4] = true
  elseif op == 'rt' then
    local n = tonumber(name)
    if n == 0 then redis.call('DEL', KEYS[4]) else redis.call('LTRIM', KEYS[4], -n, -1) end
  end
end
for i in pairs(moved) do redis.call('PEXPIRE', KEYS[i], ttl) end
redis.call('RPUSH', KEYS[5], table.concat(ARGV, '\\n', 9, #ARGV))
redis.call('LTRIM', KEYS[5], -${JOURNAL_MAX}, -1)
redis.call('PEXPIRE', KEYS[5], ttl)
return 1
`;

/**
 * Make room and add a session. ARGV 5: m, 6: tenant, 7: core JSON, 8: cap in all, 9: cap per
 * tenant. First the sweep, then each cap that is reached
 * drops least recently used sessions that run no operation until there is room. Returns {'ok'},
 * {'exists'} (m is taken) or {'tenant' | 'all', sessions held} when every candidate runs one.
 */
const CREATE = `${LIB}
-- Drop least recently used sessions of zset z that run no operation until it holds fewer than cap.
local function room(z, cap)
  local n = redis.call('ZCARD', z)
  local kept = 0
  while n >= cap do
    local ms = redis.call('ZRANGE', z, kept, kept + 63)
    if #ms == 0 then return n end
    for _, m in ipairs(ms) do
      local run = redis.call('HGET', skey(m), 'run')
      if not run then stale(z, m) n = n - 1 elseif run ~= '1' then drop(m) n = n - 1 else kept = kept + 1 end
      if n < cap then return nil end
    end
  end
  return nil
end
local m, tenant = ARGV[5], ARGV[6]
local k, tk = skey(m), tkey(tenant)
if redis.call('EXISTS', k) == 1 then return {'exists'} end
sweep()
local held = room(tk, tonumber(ARGV[9]))
if held then return {'tenant', held} end
held = room(LRU, tonumber(ARGV[8]))
if held then return {'all', held} end
redis.call('HSET', k, 'v', 1, 'st', ARGV[7], 'sv', 1, 'lu', ARGV[2], 'run', '0', 't', tenant, 'lg', '[]',
  'pc', -1, 'pg', 0, 'o', 0)
redis.call('PEXPIRE', k, TTL)
for _, z in ipairs({LRU, tk}) do
  redis.call('ZADD', z, ARGV[2], m)
  redis.call('PEXPIRE', z, TTL)
end
return {'ok'}
`;

/** The sweep alone. */
const SWEEP = `${LIB}
sweep()
return 1
`;

/** The session a ref is bound to, when it still exists. KEYS[1]: the ref key. ARGV[1]: prefix. */
const FIND_LOGICAL = `
local m = redis.call('GET', KEYS[1])
if not m then return false end
if redis.call('EXISTS', ARGV[1] .. 's:' .. m) == 0 then return false end
return m
`;

/** Script name -> its key count and Lua text, for `defineCommand`. */
export const SCRIPTS = {
  svcTouch: { numberOfKeys: 0, lua: TOUCH },
  svcWrite: { numberOfKeys: 5, lua: WRITE },
  svcCreate: { numberOfKeys: 0, lua: CREATE },
  svcSweep: { numberOfKeys: 0, lua: SWEEP },
  svcFindLogical: { numberOfKeys: 1, lua: FIND_LOGICAL },
} as const;

type Arg = string | number;

/** What `svcTouch` answers (see TOUCH). */
export type TouchReply =
  | [v: string]
  | [v: string, kind: 'j', st: string, pc: string, pg: string, o: string, entries: string[]]
  | [
      v: string,
      kind: 'f',
      st: string,
      pc: string,
      pg: string,
      o: string,
      pages: string[],
      tokens: string[],
      runs: string[],
    ];

/** The scripts as commands of a client (after `defineCommand` of each of `SCRIPTS`). */
export interface ScriptCommands {
  svcTouch(...args: Arg[]): Promise<TouchReply | null>;
  svcWrite(...args: Arg[]): Promise<number>;
  svcCreate(...args: Arg[]): Promise<[string, number?]>;
  svcSweep(...args: Arg[]): Promise<number>;
  svcFindLogical(key: string, prefix: string): Promise<string | null>;
}

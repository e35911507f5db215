/**
 * A small shared key-value store with expiry: what the MCP endpoint keeps of its transport
 * sessions so that another replica can serve them. Implemented by Redis (redis-kv.ts) when
 * `SVC_MCP_TRANSPORT_KV_URL` is set; without it nothing is shared and nothing is kept.
 */
export interface SharedKv {
  get(key: string): Promise<string | undefined>;
  /** Store `value` under `key` for `ttlMs`. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  del(key: string): Promise<void>;
}

/**
 * The servers of the HTTP benchmarks (`server`, `ops`), each normally in its own process, started
 * with `fork()` by `bench/processes.ts`:
 *
 *   node dist/bench/serve-child.js vendor          the json-server demo vendor (startDemoVendor)
 *   node dist/bench/serve-child.js svc <vendorUrl>  an svc server over fixtures/packed, as in
 *                                                  test/_helpers/server.ts, pointed at the vendor
 *   node dist/bench/serve-child.js svc <vendorUrl> default-store
 *                                                  the same with the artifact store of `svc serve`'s
 *                                                  defaults (7 days, 256 MiB) instead of 1 hour
 *   node dist/bench/serve-child.js mcp-floor <answers.json>
 *                                                  the `mcp` benchmark's floor server (mcp-floor.ts)
 *
 * svc reads its limits from the environment (`SVC_MAX_RUNNING_OPS`, ...; unset: the defaults),
 * shares its sessions in Redis when `SVC_MCP_TRANSPORT_KV_URL` is set (a replica, `replicas`
 * benchmark) and opens the artifact store `SVC_RUN_ARTIFACTS_URL` names when it is set.
 *
 * Its own process so that its CPU time and memory are its own: the load generator, the vendor
 * and svc do not share an event loop, and the peak RSS it reports is the server's.
 * IPC: sends `{type: 'ready', url}` once listening; answers `{type: 'usage'}` with its
 * CPU time, RSS, peak RSS, the requests it has received and timings; `{type: 'stop'}` closes and
 * exits. `startServer` is also used directly for the in-process arrangement (SVC_BENCH_INPROCESS).
 */
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lineLogger } from '../common/log.js';
import { startDemoVendor } from '../cli/demo-vendor.js';
import { packageRoot } from '../cli/package-root.js';
import { loadCatalogDir } from '../pack/index.js';
import {
  artifactSettingsFromEnv,
  MemoryArtifactStore,
  storeFromUrl,
  type ArtifactStore,
} from '../runtime/artifacts/index.js';
import { SvcApp } from '../server/app.js';
import { limitsFromEnv } from '../server/limits.js';
import { listen } from '../server/serve.js';
import { sessionStoreFromEnv } from '../server/stores.js';
import { median } from './harness.js';
import { startMcpFloor } from './mcp-floor.js';

/** What a server reports on request (`{type: 'usage'}` over IPC). */
export interface ChildUsage {
  type: 'usage';
  /** CPU time of the process since start, µs (of the whole process when servers share it). */
  cpuUserUs: number;
  cpuSystemUs: number;
  /** Current resident set size of the process, bytes. */
  rss: number;
  /** Peak resident set size of the process since start (getrusage ru_maxrss), bytes. */
  peakRss: number;
  heapUsed: number;
  /** Heap used right after a full collection: only when the child runs with `--expose-gc`. */
  heapAfterGc?: number;
  /** HTTP requests this server has received, and the targets of the last few. */
  requests: number;
  lastTargets: string[];
  /** Run snapshots held (svc only). */
  artifacts?: number;
  /**
   * Since the previous reading: medians (ms) of a request's arrival to the end of its answer, and
   * of the outgoing (undici) vendor calls of svc.
   */
  window: { handled: number; handlerP50: number; outgoing: number; outgoingP50: number };
}

export type ChildMessage = { type: 'ready'; url: string } | ChildUsage;

export interface StartedServer {
  url: string;
  usage(): ChildUsage;
  close(): Promise<void>;
}

/**
 * Start the vendor or svc on 127.0.0.1 and a free port, with counters and timings taken from
 * diagnostics channels (node:http server, undici client): the code measured is unchanged.
 */
export async function startServer(
  kind: string | undefined,
  /** The vendor's URL for svc; the answers file for mcp-floor. */
  vendorUrl?: string,
  storeSettings: 'bench' | 'default-store' = 'bench',
): Promise<StartedServer> {
  /** Requests are attributed to a server by the local port of their socket (set once listening). */
  let port = -1;
  let requests = 0;
  const lastTargets: string[] = [];
  const arrived = new WeakMap<object, number>();
  const sent = new WeakMap<object, number>();
  let handler: number[] = [];
  let outgoing: number[] = [];
  const keep = (xs: number[], x: number) => {
    if (xs.length < 1_000_000) xs.push(x);
  };
  // `SVC_BENCH_TIMINGS=0` (the hotpath benchmark's svc): no subscriber, so node's HTTP server and
  // undici publish nothing, as in production; `requests` and `window` then stay empty.
  const timings = kind === 'vendor' || process.env.SVC_BENCH_TIMINGS !== '0';
  if (timings) instrument();
  function instrument() {
    subscribe('http.server.request.start', (m) => {
      const { request, response } = m as { request: IncomingMessage; response: object };
      if (request.socket.localPort !== port) return;
      requests++;
      arrived.set(response, performance.now());
      lastTargets.push(request.url ?? '');
      if (lastTargets.length > 8) lastTargets.shift();
    });
    subscribe('http.server.response.finish', (m) => {
      const t = arrived.get((m as { response: object }).response);
      if (t !== undefined) keep(handler, performance.now() - t);
    });
    if (kind === 'svc') {
      subscribe('undici:request:create', (m) => {
        sent.set((m as { request: object }).request, performance.now());
      });
      subscribe('undici:request:trailers', (m) => {
        const t = sent.get((m as { request: object }).request);
        if (t !== undefined) keep(outgoing, performance.now() - t);
      });
    }
  }
  let url: string;
  let close: () => Promise<void>;
  let artifacts: MemoryArtifactStore | undefined;
  if (kind === 'vendor') {
    const vendor = await startDemoVendor();
    url = vendor.url;
    close = () => vendor.close();
  } else if (kind === 'svc' && vendorUrl) {
    const { registry } = await loadCatalogDir(join(packageRoot(), 'fixtures', 'packed'), {
      backendOverrides: { brewery: vendorUrl, helpdesk: vendorUrl },
    });
    const logger = lineLogger((l) => process.stderr.write(l + '\n'), 'warn');
    const store = await artifactStore(storeSettings);
    if (store instanceof MemoryArtifactStore) artifacts = store;
    const limits = limitsFromEnv(process.env);
    // Unset SVC_MCP_TRANSPORT_KV_URL: the sessions of a single process, as before.
    const sessions = process.env.SVC_MCP_TRANSPORT_KV_URL
      ? await sessionStoreFromEnv(process.env, limits, logger)
      : undefined;
    const app = new SvcApp({
      registry,
      artifacts: store,
      limits,
      logger,
      ...(sessions
        ? {
            sessions: sessions.sessions,
            replica: sessions.replica,
            ...(sessions.shared ? { shared: sessions.shared } : {}),
          }
        : {}),
    });
    const l = await listen(app, 0, '127.0.0.1');
    url = l.url;
    close = async () => {
      await l.close(500);
      await store.close();
      await sessions?.close();
    };
  } else if (kind === 'mcp-floor' && vendorUrl) {
    ({ url, close } = await startMcpFloor(vendorUrl));
  } else {
    throw new Error('usage: serve-child.js vendor | svc <vendorUrl> | mcp-floor <answers.json>');
  }
  port = Number(new URL(url).port);
  return {
    url,
    close,
    usage: () => {
      const cpu = process.cpuUsage();
      const mem = process.memoryUsage();
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      const u: ChildUsage = {
        type: 'usage',
        cpuUserUs: cpu.user,
        cpuSystemUs: cpu.system,
        rss: mem.rss,
        peakRss: process.resourceUsage().maxRSS * 1024,
        heapUsed: mem.heapUsed,
        ...(gc ? { heapAfterGc: process.memoryUsage().heapUsed } : {}),
        requests,
        lastTargets: [...lastTargets],
        ...(artifacts ? { artifacts: artifacts.size } : {}),
        window: {
          handled: handler.length,
          handlerP50: median(handler),
          outgoing: outgoing.length,
          outgoingP50: median(outgoing),
        },
      };
      handler = [];
      outgoing = [];
      return u;
    },
  };
}

/**
 * The run artifact store of svc: the one `SVC_RUN_ARTIFACTS_URL` names when set (a `file:///dir`
 * shared by replicas on one machine), else a memory store (1 hour, or `svc serve`'s defaults).
 */
async function artifactStore(settings: 'bench' | 'default-store'): Promise<ArtifactStore> {
  if (process.env.SVC_RUN_ARTIFACTS_URL) {
    const fromEnv = artifactSettingsFromEnv(process.env);
    return storeFromUrl(fromEnv.url, fromEnv);
  }
  return new MemoryArtifactStore(
    settings === 'default-store' ? artifactSettingsFromEnv({}) : { retentionSecs: 3600, gcIntervalSecs: 3600 },
  );
}

async function main(): Promise<void> {
  const [kind, vendorUrl, store] = process.argv.slice(2);
  const s = await startServer(kind, vendorUrl, store === 'default-store' ? store : 'bench');
  process.on('message', (m: { type?: string }) => {
    if (m?.type === 'usage') process.send!(s.usage());
    else if (m?.type === 'stop') void s.close().finally(() => process.exit(0));
  });
  // The parent going away (crash, Ctrl-C) ends the child too.
  process.on('disconnect', () => process.exit(0));
  process.send!({ type: 'ready', url: s.url } satisfies ChildMessage);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e: unknown) => {
    process.stderr.write(`serve-child failed: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  });
}

/**
 * The GC timer of a run artifact store: a pass every interval (never two at once), logged at debug;
 * a failed pass is logged as a warning and tried again at the next tick, never thrown, so a GC
 * failure never takes the process down. `stop` ends it; what the store holds stays.
 */
import type { Logger } from '../../common/log.js';
import { ownerOf, snapshotJson, type RunSnapshot } from './snapshot.js';
import { sha256Hex } from '../../common/canonical.js';

/** setInterval cannot wait longer than this (larger values fire after 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface GcPass {
  /** The store's name in log lines (`memory`, `file`, `s3`). */
  store: string;
  /** One pass: what it did, for the log line (e.g. `{removed: 3}`). */
  run: () => Promise<Record<string, unknown>>;
  /** What a failure is called in the log line (never a secret). */
  describe: (e: unknown) => unknown;
  logger?: Logger;
}

export class GcTimer {
  private timer: NodeJS.Timeout | undefined;
  private collecting = false;

  constructor(intervalSecs: number, pass: GcPass) {
    this.timer = setInterval(() => this.tick(pass), Math.min(MAX_TIMER_MS, intervalSecs * 1000));
    this.timer.unref();
  }

  private tick({ store, run, describe, logger }: GcPass): void {
    if (this.collecting) return;
    this.collecting = true;
    run()
      .then((did) => logger?.debug('artifact gc pass', { store, ...did }))
      .catch((e: unknown) => logger?.warn('artifact gc pass failed', { store, error: describe(e) }))
      .finally(() => {
        this.collecting = false;
      });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** `put` of every store: serialize the snapshot, take its id (`pr` + sha256), `write` it. */
export async function putByWrite(
  store: { write(id: string, json: string, owner?: string): Promise<void> },
  s: RunSnapshot,
): Promise<string> {
  const json = snapshotJson(s);
  const id = 'pr' + sha256Hex(json);
  await store.write(id, json, ownerOf(s));
  return id;
}

export {
  snapshotOf,
  snapshotJson,
  artifactId,
  isArtifactId,
  ARTIFACT_ID_PATTERN,
  SNAPSHOT_FORMAT,
  PROGRAM_TEXT_MAX,
} from './snapshot.js';
export type { RunSnapshot, SnapshotStep, SnapshotError, SnapshotExtra, SnapshotSession } from './snapshot.js';
export {
  artifactSettingsFromEnv,
  DEFAULT_RETENTION_SECS,
  DEFAULT_GC_INTERVAL_SECS,
  DEFAULT_MEMORY_MAX_BYTES,
} from './store.js';
export { storeFromUrl } from './store-from-url.js';
export type { ArtifactStore, StoreOptions, StoreStats, ArtifactSettings } from './store.js';
export { MemoryArtifactStore } from './memory-store.js';
export { FileArtifactStore } from './file-store.js';
export { WriteBehindStore } from './write-behind.js';

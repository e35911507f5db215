export { snapshotOf, artifactId, isArtifactId, ARTIFACT_ID_PATTERN, SNAPSHOT_FORMAT } from './snapshot.js';
export type { RunSnapshot, SnapshotStep, SnapshotError, SnapshotExtra } from './snapshot.js';
export { storeFromUrl, artifactSettingsFromEnv, DEFAULT_RETENTION_SECS, DEFAULT_GC_INTERVAL_SECS } from './store.js';
export type { ArtifactStore, StoreOptions, ArtifactSettings } from './store.js';
export { MemoryArtifactStore } from './memory-store.js';
export { FileArtifactStore } from './file-store.js';

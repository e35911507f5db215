export {
  snapshotOf,
  snapshotJson,
  artifactId,
  isArtifactId,
  verifiedSnapshot,
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
  DEFAULT_MEMORY_PER_SESSION,
} from './store.js';
export { storeFromUrl } from './store-from-url.js';
export type { ArtifactStore, StoreOptions, StoreStats, ArtifactSettings } from './store.js';
export { MemoryArtifactStore } from './memory-store.js';
export { FileArtifactStore } from './file-store.js';
// Types only: the S3 store (and the AWS SDK) is loaded by storeFromUrl when the URL names it.
export type { S3ArtifactStore, S3OpenOptions } from './s3-store.js';
export { parseS3Url, s3SettingsFromEnv, isBucketName, DEFAULT_S3_REGION } from './s3-settings.js';
export type { S3Settings, S3Location } from './s3-settings.js';
export { WriteBehindStore } from './write-behind.js';
export { DEFAULT_HELD_MAX_BYTES } from './held.js';
export type { HeldOptions, WriteState } from './held.js';

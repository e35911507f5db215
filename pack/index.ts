export * from './cgs.js';
export { compileSource } from './compile-source.js';
export type { CompiledCatalog, CgsCheck } from './compile-source.js';
export { checkCgs, valueFits } from './check.js';
export type { Located } from './check.js';
export { artifactStem, cgsFileName, manifestFileName, manifestFor, serialize, ManifestSchema } from './artifact.js';
export type { Manifest } from './artifact.js';
export { readSourceDir } from './read-source.js';
export { writeArtifacts } from './write-artifacts.js';
export type { Written } from './write-artifacts.js';
export { loadCatalogDir, loadSchemaFile, envOverrideName } from './load.js';
export type { LoadOptions, LoadResult } from './load.js';
export { verifyCgs, parseManifest } from './verify.js';
export { Registry, registryEntry } from './registry.js';
export { displayUrl, hasUserinfo, withoutUserinfo } from './urls.js';
export type { RegistryEntry } from './registry.js';
export { parseTemplate, jsonTemplateParams, inPathTemplate } from './template.js';
export type { ParsedTemplate, TemplatePart } from './template.js';
export { CatalogSourceFileSchema } from './source-schema.js';
export type {
  CatalogSourceFile,
  SourceCatalog,
  SourceEntity,
  SourceRelation,
  SourceCapability,
  SourceParam,
  SourceMapping,
  SourceTypeSpec,
} from './source-schema.js';
export { cgsSchema } from './cgs-schema.js';
export type { SourceText } from './source.js';
export { importOpenApi, entryIdOf, readOpenApi, writeImport } from './import/index.js';
export type { ImportOptions, ImportResult, PackFiles, ImportCatalog, ImportLog } from './import/index.js';

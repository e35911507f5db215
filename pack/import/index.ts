/** Importing OpenAPI documents as authored catalog sources (`svc import openapi`). */
export { importOpenApi, entryIdOf } from './import-openapi.js';
export type { ImportOptions, ImportResult } from './import-openapi.js';
export type { PackFiles } from './settle.js';
export { readOpenApi } from './read-openapi.js';
export { writeImport } from './write-import.js';
export type { ImportCatalog, ImportLog } from './model.js';

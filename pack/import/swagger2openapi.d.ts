/** The one function of swagger2openapi (BSD-3-Clause, no bundled types) the importer calls. */
declare module 'swagger2openapi' {
  export function convertObj(
    swagger: object,
    options: { patch?: boolean; warnOnly?: boolean; resolve?: boolean; direct?: boolean },
  ): Promise<{ openapi: Record<string, unknown> }>;
}

/**
 * Media types of files: what svc never reads as a value (images, sound, video, fonts, archives,
 * office documents, binary encodings). The importer skips reads answering only such types
 * (`file_answer`) and the runtime refuses such an answer to a value read (runtime/decode.ts); any
 * other type that is not JSON is read as text.
 */
const FILE_TYPE =
  /^(image|audio|video|font|model)\/|^application\/(octet-stream|pdf|zip|gzip|x-gzip|x-tar|x-7z-compressed|x-rar-compressed|vnd\.rar|x-bzip2?|x-xz|zstd|java-archive|wasm|msword|vnd\.ms-|vnd\.openxmlformats|vnd\.oasis\.opendocument|x-protobuf|protobuf|x-msgpack|msgpack|x-sqlite3|x-shockwave-flash|postscript|vnd\.android\.package-archive)/i;

/** A Content-Type's media type, lower case, without parameters (`Text/CSV; charset=utf-8` -> `text/csv`). */
export function mediaType(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

/** Whether a media type (`image/png`, `application/pdf; x=1`) is a file's. */
export function isFileType(type: string): boolean {
  return FILE_TYPE.test(type.trim());
}

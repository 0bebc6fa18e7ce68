/**
 * Where resumable uploads live and how long they are kept (docs/protocol.md, "Uploads"). Apart
 * from `tus-uploads.ts` so the server can route and sweep without loading `@tus/server`, which
 * it loads on the first resumable upload.
 */

/** Path of the tus endpoint (creation); each upload lives at `<path>/<upload-id>`. */
export const TUS_UPLOAD_PATH = '/api/v1/uploads/tus';
/** How long an upload may stay untouched (neither created nor written to) before it is removed, ms (24 hours). */
export const TUS_UPLOAD_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** How often old uploads are looked for while the server runs, ms (1 hour; also once at start). */
export const TUS_UPLOAD_SWEEP_MS = 60 * 60 * 1000;
/** Directory of unfinished uploads, relative to the data directory. */
export const TUS_UPLOADS_DIRECTORY = 'uploads';

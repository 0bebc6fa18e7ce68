/**
 * The in-band markers a tool writes where it cut text, shared with the secret redaction
 * (`platform/secrets/cut-pieces.ts`), which hides what a cut left of a secret value next to
 * them. The head-and-tail omission marker is `omissionMarker` of `executors/output-truncation.ts`.
 */

/**
 * What follows the kept start of a line `read_file` shortened, then the count of characters
 * left out and `more characters]`: `… [… line shortened: 3000 more characters]`.
 */
export const LINE_SHORTENED_MARKER = ' [… line shortened: ';

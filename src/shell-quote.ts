/** Quotes a string as one word for a POSIX shell: `'…'`, with embedded quotes as `'\''`. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

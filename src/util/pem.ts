/**
 * PEM text (RFC 7468): the form certificates and keys take in files and environment variables. A
 * setting that holds "a file path or the PEM text itself" (source.tls.ca / cert / key) is told apart
 * by the text's first line, `-----BEGIN <label>-----`; no file path starts so.
 */
export function isPemText(value: string): boolean {
  return value.trimStart().startsWith('-----BEGIN');
}

/** A private key's PEM block (PKCS#8, PKCS#1, SEC1, encrypted or not), anywhere in a text. */
const PRIVATE_KEY_BLOCK = /-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----[\s\S]*?(?:-----END \1-----|$)/g;

/** Text with every private key's PEM block replaced, for messages and logs (key material never appears in them). */
export function redactPrivateKeys(text: string): string {
  return text.includes('PRIVATE KEY') ? text.replace(PRIVATE_KEY_BLOCK, '(private key)') : text;
}

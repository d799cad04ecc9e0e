/**
 * Credentials out of text that goes into messages and logs (src/util/errors.ts: never put
 * credentials into a message). A URL's password runs from the ':' after the user to the last '@' of
 * the URL token, so a password holding an unencoded '/', '?', '#' or '@' (a malformed URL, which is
 * exactly when it is quoted in an error) is still hidden whole.
 */
export function redactUrlCredentials(text: string): string {
  return text.replace(/(\/\/[^\s:/@"'`]*:)[^\s"'`]*@/g, '$1***@').replace(/([?&]password=)[^&\s"'`]*/gi, '$1***');
}

/**
 * The URL settings of floe's configuration: the MySQL source URL, HTTP endpoints and the SQL catalog
 * URL. A bad URL is reported without quoting it: it may hold a password.
 */
import { z } from 'zod';

/** `new URL(text)`, or undefined: the refinements below report a bad URL without quoting it (it may hold a password). */
function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

export const mysqlUrl = z.string().superRefine((text, ctx) => {
  const u = parsedUrl(text);
  const found = u ? `the scheme ${u.protocol}//` : 'a string that is not a URL';
  if (!u || (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:')) ctx.addIssue({ code: 'custom', message: `expected mysql://user:password@host:port (or mariadb://), found ${found}; percent-encode a password's reserved characters (/ ? # @ : as %2F %3F %23 %40 %3A)` });
  else if (u.port !== '' && (Number(u.port) < 1 || Number(u.port) > 65535)) ctx.addIssue({ code: 'custom', message: 'expected a port 1..65535 in the URL' });
  // parameter names only: a value may be a secret
  else if (u.search !== '') ctx.addIssue({ code: 'custom', message: `expected no query parameters, found ${[...new Set(u.searchParams.keys())].map((k) => JSON.stringify(k)).join(', ')}; TLS is set with source.tls (mode, ca, cert, key)` });
});

/** Endpoints floe speaks HTTP to: zod's plain url() takes any scheme ("u:pw@host" parses as the scheme u:). */
export const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL (percent-encode reserved characters in a user or password)' });

/** What src/catalog/sql/sql-url.ts opens; checked here so every command refuses a bad one up front. */
export const sqlCatalogUrl = z
  .string()
  .min(1)
  .superRefine((text, ctx) => {
    const t = text.trim().replace(/^jdbc:/i, '');
    const scheme = /^([a-z0-9+.-]+):/i.exec(t)?.[1]?.toLowerCase();
    const expected = 'expected postgresql://user:pass@host:port/db, mysql://user:pass@host:port/db or sqlite:/path/to/catalog.db';
    if (scheme === 'sqlite') {
      if (t.length === 'sqlite:'.length) ctx.addIssue({ code: 'custom', message: `${expected}, found sqlite: without a file` });
    } else if (scheme === 'postgresql' || scheme === 'postgres' || scheme === 'mysql' || scheme === 'mariadb') {
      if (!parsedUrl(t)) ctx.addIssue({ code: 'custom', message: `${expected}, found a ${scheme}: string that is not a URL; percent-encode a password's reserved characters (/ ? # @ : as %2F %3F %23 %40 %3A)` });
    } else ctx.addIssue({ code: 'custom', message: `${expected}, found ${scheme === undefined ? 'no scheme' : `the scheme ${scheme}:`}` });
  });

/**
 * `source.tls` in the config: the default mode, the combinations that are refused (each with the
 * path and what to set), PEM text from `${VAR}` told apart from a file path, the connection the
 * pipeline builds from it, and a private key kept out of config errors and logged configs.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseConfigText, redactConfig } from '../../src/config/load.js';
import { mysqlConnection } from '../../src/pipeline/config-options.js';
import { redactPrivateKeys } from '../../src/util/pem.js';

const KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const KEY_BODY = KEY.split('\n').filter((l) => l && !l.startsWith('-----'));
const CERT = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUe\n-----END CERTIFICATE-----\n';

function configError(text: string, env: NodeJS.ProcessEnv = {}): string {
  try {
    parseConfigText(text, env);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a config error');
}

const tls = (lines: string) => `source:\n  host: db\n  tls:\n${lines.replace(/^/gm, '    ')}\n`;

describe('source.tls', () => {
  it('is preferred by default, as the MySQL client, and reaches the connection the pipeline opens', () => {
    const c = parseConfigText('source:\n  host: db\n');
    expect(c.source!.tls).toEqual({ mode: 'preferred' });
    expect(mysqlConnection(c.source!).tls).toEqual({ mode: 'preferred' });
    const url = parseConfigText(`source:\n  url: mysql://floe:pw@db:3307\n${tls('mode: verify-identity\nca: /etc/ssl/db-ca.pem').split('\n').slice(2).join('\n')}`);
    expect(mysqlConnection(url.source!)).toEqual({ host: 'db', port: 3307, user: 'floe', password: 'pw', tls: { mode: 'verify-identity', ca: '/etc/ssl/db-ca.pem' } });
  });

  it('takes each of ca, cert, key as a path or as PEM text from an environment variable', () => {
    const c = parseConfigText(tls('mode: verify-ca\nca: ${CA}\ncert: ./client-cert.pem\nkey: ${KEY}'), { CA: CERT, KEY });
    expect(c.source!.tls).toEqual({ mode: 'verify-ca', ca: CERT, cert: './client-cert.pem', key: KEY });
  });

  it('refuses the combinations that would not do what they say, naming the path and what to set', () => {
    expect(configError(tls('mode: verify-ca'))).toContain(
      'source.tls.ca: expected the CA certificate that issued the server certificate with mode verify-ca, found none: set ca (a path or PEM text), or use verify-identity',
    );
    expect(configError(tls('ca: /etc/ca.pem'))).toContain('source.tls.ca: mode preferred does not check the server certificate, so ca would be ignored: set mode: verify-ca');
    expect(configError(tls('mode: required\nca: /etc/ca.pem'))).toContain('source.tls.ca: mode required does not check the server certificate');
    expect(configError(tls('mode: disabled\ncert: c.pem\nkey: k.pem'))).toContain('source.tls.mode: expected no cert, key with mode disabled (no TLS: they would be ignored), found them');
    expect(configError(tls('mode: required\ncert: c.pem'))).toContain('source.tls.cert: expected source.tls.key with a client certificate, found none');
    expect(configError(tls('mode: required\nkey: k.pem'))).toContain('source.tls.key: expected source.tls.cert with a private key, found none');
    expect(configError(tls('mode: optional'))).toContain('source.tls.mode');
    expect(configError(tls('mode: required\nsslmode: on'))).toContain('source.tls: unknown key "sslmode"');
    // verify-identity without ca: the public CAs, with the host name checked
    expect(parseConfigText(tls('mode: verify-identity')).source!.tls).toEqual({ mode: 'verify-identity' });
  });

  it('refuses query parameters in source.url, naming them and not their values', () => {
    const message = configError('source:\n  url: mysql://floe:pw@db:3306?ssl=true&sslkey=hunter2\n');
    expect(message).toContain('source.url: expected no query parameters, found "ssl", "sslkey"; TLS is set with source.tls');
    expect(message).not.toContain('hunter2');
  });

  it('keeps a private key out of config errors and of the logged config', () => {
    const cut = KEY.slice(0, KEY.indexOf('-----END'));
    const message = configError(tls('mode: required\ncert: c.pem\nkey: ${KEY}'), { KEY: cut });
    expect(message).toContain('source.tls.key: expected PEM text from -----BEGIN to -----END, found no -----END line');
    for (const line of KEY_BODY) expect(message).not.toContain(line);

    const c = parseConfigText(tls('mode: required\ncert: ${CERT}\nkey: ${KEY}'), { CERT, KEY });
    const logged = JSON.stringify(redactConfig(c));
    expect(logged).toContain('"key":"***"');
    for (const line of KEY_BODY) expect(logged).not.toContain(line);
    expect(redactPrivateKeys(`found ${KEY} in the text`)).toBe('found (private key)\n in the text');
  });
});

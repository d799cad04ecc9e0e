/**
 * Does this S3 store honour `If-None-Match: *` on PutObject? AWS S3 (since 2024-08), MinIO and Ceph
 * do; others (s3rver, older MinIO, some gateways) ignore the header and overwrite silently, which would
 * let two filesystem-catalog commits both "win" and one of them be lost. The only reliable test is to
 * try: create a fresh probe object with the header, then create it again with the header. A store that
 * refuses the second write (412) is atomic; one that accepts it is not.
 *
 * The probe object lives next to the caller's data (`<location>/.floe-atomic-create-probe-<uuid>`),
 * where floe has write permission anyway, and is deleted afterwards (best effort).
 */
import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { errorCodeOf, httpStatusOf, isPreconditionFailed } from './s3-errors.js';
import type { S3Client } from '@aws-sdk/client-s3';
import { directoryPrefix, formatS3Uri, parseS3Uri } from './s3-location.js';

const encoder = new TextEncoder();

/** What the probe needs of the S3 FileIO (an interface here, so that this module does not import it back). */
export interface ProbeTarget {
  readonly client: Pick<S3Client, 'send'>;
  errorFor(action: string, location: string, cause: unknown): Error;
}

export async function probeAtomicCreate(io: ProbeTarget, location: string): Promise<boolean> {
  const { bucket, key } = parseS3Uri(location);
  const probeKey = `${directoryPrefix(key)}.floe-atomic-create-probe-${randomUUID()}`;
  const probeUri = formatS3Uri(bucket, probeKey);
  const put = (body: string) =>
    io.client.send(new PutObjectCommand({ Bucket: bucket, Key: probeKey, Body: encoder.encode(body), IfNoneMatch: '*' }));
  try {
    try {
      await put('floe atomic-create probe: first write');
    } catch (e) {
      if (refusesHeader(e)) return false;
      // Nothing can exist under a fresh random key; a 412 here means the store answers 412 to everything.
      if (isPreconditionFailed(e)) return false;
      throw io.errorFor('probe conditional writes (If-None-Match) with', probeUri, e);
    }
    try {
      await put('floe atomic-create probe: second write');
      return false; // accepted an overwrite despite If-None-Match: the header is ignored
    } catch (e) {
      if (isPreconditionFailed(e)) return true;
      if (refusesHeader(e)) return false;
      throw io.errorFor('probe conditional writes (If-None-Match) with', probeUri, e);
    }
  } finally {
    // the probe's verdict is made; a probe object left behind is a few bytes, harmless
    await io.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: probeKey })).catch(() => undefined);
  }
}

/** Stores that reject the conditional header outright (instead of ignoring it) are not atomic either. */
function refusesHeader(e: unknown): boolean {
  const code = errorCodeOf(e);
  return code === 'NotImplemented' || httpStatusOf(e) === 501;
}

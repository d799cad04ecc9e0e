/**
 * Directory-shaped operations over any FileIO: they use the optional capability methods where an
 * implementation has them (local disk, S3 both do) and fall back to recursive `list` / `delete`
 * otherwise. The fallback assumes `list` returns locations spelled like the prefix it was given.
 */
import type { DirectoryListing, FileIO } from './file-io.js';

/** Immediate children of `dir`: objects and sub-directories (common prefixes), as full locations. */
export async function listChildren(io: FileIO, dir: string): Promise<DirectoryListing> {
  if (io.listChildren) return io.listChildren(dir);
  const base = `${dir.replace(/\/+$/, '')}/`;
  const files: string[] = [];
  const directories = new Set<string>();
  for (const location of await io.list(base)) {
    if (!location.startsWith(base)) continue;
    const rest = location.slice(base.length);
    const slash = rest.indexOf('/');
    if (slash < 0) files.push(location);
    else directories.add(base + rest.slice(0, slash));
  }
  return { files: files.sort(), directories: [...directories].sort() };
}

/** Removes everything under `dir` (and the directory itself where directories exist). */
export async function deleteTree(io: FileIO, dir: string): Promise<void> {
  if (io.deleteTree) return io.deleteTree(dir);
  const base = `${dir.replace(/\/+$/, '')}/`;
  for (const location of await io.list(base)) await io.delete(location);
}

/** The last path segment of a location (`s3://b/w/db` → `db`). */
export function baseName(location: string): string {
  const trimmed = location.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/**
 * Starts a `worker_threads` worker running one of floe's thread modules — the build's `.js` file as
 * is, or, from the TypeScript sources (tests, a source checkout run through bin/floe.mjs, the bench),
 * the `.ts` file through tsx: a worker does not inherit its parent's loader hooks (they are per
 * thread), so the worker first registers tsx (`tsx/esm/api`) and then imports the module.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** Where tsx's registration API is, resolved from floe's own location (an eval worker resolves from the cwd). */
function tsxApiUrl(): string {
  const resolve = (import.meta as { resolve?: (specifier: string) => string }).resolve;
  if (resolve) return resolve('tsx/esm/api');
  // tsx/esm/api's ESM build (its exports map: require → index.cjs, import → index.mjs beside it)
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
}

/** `threadModule`: the thread module's URL, `.ts` or `.js` (the caller picks the one beside itself). */
export function startModuleWorker(threadModule: URL): Worker {
  if (!threadModule.pathname.endsWith('.ts')) return new Worker(threadModule);
  const code = `import(${JSON.stringify(tsxApiUrl())}).then((m) => { (m.register ?? m.default.register)(); return import(${JSON.stringify(threadModule.href)}); })`;
  return new Worker(code, { eval: true });
}

/** The URL of the thread module `name` (no extension) beside `importMetaUrl`, with that module's own extension. */
export function threadModuleBeside(importMetaUrl: string, name: string): URL {
  return new URL(`./${name}${importMetaUrl.endsWith('.ts') ? '.ts' : '.js'}`, importMetaUrl);
}

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

/**
 * The parent's Node options without tsx's loader (`--import tsx`): a worker inherits the parent's
 * options, and a built module needs no TypeScript loader — with it, every module the worker loads
 * (zongji and mysql2 in the binlog worker, parquet-wasm in each encoder) goes through tsx's hooks,
 * CPU spent at every worker's start for nothing (the bench runs the build under tsx).
 */
export function withoutTsx(execArgv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i]!;
    if ((a === '--import' || a === '--require' || a === '-r' || a === '--loader') && /^tsx(\/|$)/.test(execArgv[i + 1] ?? '')) {
      i++;
      continue;
    }
    if (/^--(import|require|loader)=tsx(\/|$)/.test(a)) continue;
    out.push(a);
  }
  return out;
}

/** `threadModule`: the thread module's URL, `.ts` or `.js` (the caller picks the one beside itself). */
export function startModuleWorker(threadModule: URL): Worker {
  if (!threadModule.pathname.endsWith('.ts')) {
    const execArgv = withoutTsx(process.execArgv);
    if (execArgv.length === process.execArgv.length) return new Worker(threadModule);
    try {
      return new Worker(threadModule, { execArgv });
    } catch (e) {
      // options a worker refuses when they are given (V8's, such as --max-old-space-size or
      // --trace-gc) but takes silently when inherited: inherit them, tsx and all
      if ((e as NodeJS.ErrnoException).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw e;
      return new Worker(threadModule);
    }
  }
  const code = `import(${JSON.stringify(tsxApiUrl())}).then((m) => { (m.register ?? m.default.register)(); return import(${JSON.stringify(threadModule.href)}); })`;
  return new Worker(code, { eval: true });
}

/** The URL of the thread module `name` (no extension) beside `importMetaUrl`, with that module's own extension. */
export function threadModuleBeside(importMetaUrl: string, name: string): URL {
  return new URL(`./${name}${importMetaUrl.endsWith('.ts') ? '.ts' : '.js'}`, importMetaUrl);
}

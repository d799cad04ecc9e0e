#!/usr/bin/env node
// Fails when a source file passes MAX_LINES: a file that long usually holds two concepts, and the
// house keeps one concept per file (STYLE.md, "Shape of the tree"). Run by `npm run lint`.
// Usage: node scripts/check-file-size.mjs [dir ...] (default: src)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const MAX_LINES = 400;

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name)) yield path;
  }
}

/** Lines as `wc -l` counts them, plus a last line without its newline. */
function lineCount(text) {
  if (text.length === 0) return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

const dirs = process.argv.length > 2 ? process.argv.slice(2) : ['src'];
const over = [];
for (const dir of dirs) {
  for (const file of sourceFiles(dir)) {
    const lines = lineCount(readFileSync(file, 'utf8'));
    if (lines > MAX_LINES) over.push(`${file}: ${lines} lines`);
  }
}
if (over.length > 0) {
  console.error(`file size: expected every source file at most ${MAX_LINES} lines, found ${over.length} over:\n  ${over.join('\n  ')}\nsplit each along a seam (a module with one job and a name that says it)`);
  process.exit(1);
}

/**
 * The documentation's relative links resolve: every `[text](target)` in README.md and docs/*.md that
 * is not a URL names a file or directory of the repository, and a `#fragment` names a heading of the
 * Markdown file it points into (by GitHub's anchor rule). Sections move between files; this keeps
 * the links that point at them honest.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The text with fenced code blocks and inline code spans blanked: links and headings there are code. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, 'code');
}

/**
 * GitHub's anchor for a heading: the rendered text lower-cased, punctuation other than `-` and `_`
 * dropped, each space a hyphen; a repeated anchor gets -1, -2, … in order.
 */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const fences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const m of fences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative link targets of `file` (repository-relative) that do not resolve, each with why. */
function brokenLinks(file: string, markdown: string, exists: (path: string) => 'file' | 'dir' | undefined, readMarkdown: (path: string) => string): string[] {
  const broken: string[] = [];
  for (const m of withoutCode(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [path, fragment] = target.split('#', 2) as [string, string | undefined];
    const resolved = path === '' ? file : join(dirname(file), decodeURI(path));
    const kind = exists(resolved);
    if (!kind) {
      broken.push(`${file}: ${target} (no ${resolved})`);
      continue;
    }
    if (fragment !== undefined && kind === 'file' && resolved.endsWith('.md') && !anchors(readMarkdown(resolved)).has(fragment)) {
      broken.push(`${file}: ${target} (no heading #${fragment} in ${resolved})`);
    }
  }
  return broken;
}

function onDisk(path: string): 'file' | 'dir' | undefined {
  const full = join(ROOT, path);
  if (relative(ROOT, full).startsWith('..') || !existsSync(full)) return undefined;
  return statSync(full).isDirectory() ? 'dir' : 'file';
}

const readRepo = (path: string) => readFileSync(join(ROOT, path), 'utf8');

const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

describe('the documentation links', () => {
  it.each(DOCS)('in %s resolve to files and headings that exist', (file) => {
    expect(brokenLinks(file, readRepo(file), onDisk, readRepo)).toEqual([]);
  });

  it('are all found and checked, fragments included (a broken one is reported)', () => {
    const files: Record<string, string> = {
      'docs/a.md': '# A\n\n## Purged binlogs\n\n## DDL policy (`schemaChanges`)\n\n## Purged binlogs\n',
      'docs/b.md': '# B\n',
    };
    const exists = (p: string) => (p in files ? 'file' : p === 'docs' ? 'dir' : undefined);
    const read = (p: string) => files[p]!;
    const doc = [
      '[ok](a.md) [ok](a.md#purged-binlogs) [ok](a.md#purged-binlogs-1) [ok](a.md#ddl-policy-schemachanges) [ok](#b)',
      '[gone](missing.md) ![gone image](../x.png) [bad anchor](a.md#purged-binlog) [url](https://example.com/x.md)',
      '`[in code](nowhere.md)`',
      '```md\n[in a fence](nowhere.md)\n```',
    ].join('\n');
    expect(brokenLinks('docs/b.md', doc, exists, read)).toEqual([
      'docs/b.md: missing.md (no docs/missing.md)',
      'docs/b.md: ../x.png (no x.png)',
      'docs/b.md: a.md#purged-binlog (no heading #purged-binlog in docs/a.md)',
    ]);
  });
});

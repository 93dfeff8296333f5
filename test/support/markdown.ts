import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Just enough Markdown reading for the tests that keep README.md and docs/ in step with the code: headings, tables
 * (with the headings they sit under), inline code spans, links and GitHub's heading anchors. Fenced code blocks are
 * skipped, so an example that looks like a heading or a table is not taken for one.
 */

export const repositoryRoot = path.resolve(import.meta.dirname, '../..');

export function readDoc(relativePath: string): string {
  return readFileSync(path.join(repositoryRoot, relativePath), 'utf8');
}

export interface Heading {
  level: number;
  text: string;
  line: number;
}

export interface TableRow {
  cells: string[];
  line: number;
}

export interface Table {
  /** The headings the table sits under, outermost first. */
  headings: Heading[];
  header: string[];
  rows: TableRow[];
}

/** The document's lines outside fenced code blocks, with their 1-based line numbers. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const lines: { text: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^\s*(```+|~~~+)/.exec(text)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0];
      else if (marker[0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) lines.push({ text, line: index + 1 });
  });
  return lines;
}

export function headingsOf(markdown: string): Heading[] {
  const headings: Heading[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text);
    if (match) headings.push({ level: (match[1] as string).length, text: match[2] as string, line });
  }
  return headings;
}

/** Splits a table line into cells, keeping `|` inside code spans and escaped as `\|`. */
function cellsOf(line: string): string[] {
  const cells: string[] = [];
  let current = '';
  let inCode = false;
  const body = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  for (let index = 0; index < body.length; index++) {
    const character = body[index] as string;
    if (character === '\\' && body[index + 1] === '|') {
      current += '|';
      index++;
    } else if (character === '`') {
      inCode = !inCode;
      current += character;
    } else if (character === '|' && !inCode) {
      cells.push(current.trim());
      current = '';
    } else {
      current += character;
    }
  }
  cells.push(current.trim());
  return cells;
}

export function tablesOf(markdown: string): Table[] {
  const tables: Table[] = [];
  const open: Heading[] = [];
  const lines = proseLines(markdown);
  for (let index = 0; index < lines.length; index++) {
    const { text, line } = lines[index] as { text: string; line: number };
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading) {
      const level = (heading[1] as string).length;
      while (open.length > 0 && (open[open.length - 1] as Heading).level >= level) open.pop();
      open.push({ level, text: heading[2] as string, line });
      continue;
    }
    const separator = lines[index + 1]?.text ?? '';
    if (!text.trim().startsWith('|') || !/^\s*\|?\s*:?-{3,}/.test(separator)) continue;
    const table: Table = { headings: [...open], header: cellsOf(text), rows: [] };
    index += 2;
    while (index < lines.length && (lines[index] as { text: string }).text.trim().startsWith('|')) {
      const row = lines[index] as { text: string; line: number };
      table.rows.push({ cells: cellsOf(row.text), line: row.line });
      index++;
    }
    index--;
    tables.push(table);
  }
  return tables;
}

/** The contents of the inline code spans in a piece of Markdown. */
export function codeSpans(markdown: string): string[] {
  return [...markdown.matchAll(/(`+)(.+?)\1/g)].map((match) => (match[2] as string).trim());
}

/** The Markdown text without its code spans, links' targets and emphasis: what GitHub turns into an anchor. */
function headingPlainText(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`+([^`]*)`+/g, '$1')
    .replace(/<[^>]+>/g, '');
}

/**
 * The anchors GitHub gives a document's headings: lower-cased, punctuation other than `-` and `_` removed, spaces
 * turned into `-`, and `-1`, `-2`… appended to repeats (the algorithm of github-slugger); and those of `<a id>`.
 */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const heading of headingsOf(markdown)) {
    const base = headingPlainText(heading.text)
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    let slug = base;
    let count = seen.get(base) ?? 0;
    while (anchors.has(slug)) slug = `${base}-${++count}`;
    seen.set(base, count);
    anchors.add(slug);
  }
  // Anchors written by hand (`<a id="hot-metrics"></a>`) for a paragraph that is not a heading.
  for (const { text } of proseLines(markdown)) {
    for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] as string);
  }
  return anchors;
}

export interface Link {
  target: string;
  line: number;
}

/** Inline links and images outside code (`[text](target)`), with their line numbers. */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const withoutCode = text.replace(/(`+).+?\1/g, '');
    for (const match of withoutCode.matchAll(/!?\[(?:[^\]]|\][^(])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: match[1] as string, line });
    }
  }
  return links;
}

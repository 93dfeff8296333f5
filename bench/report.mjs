// Each benchmark owns one section of docs/benchmarks.md, between <!-- BEGIN name --> and <!-- END name -->, and
// rewrites only that section, so benchmarks run at different times never overwrite each other's figures.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'benchmarks.md');
const header = `# Benchmarks

Every figure here is written by a script in \`bench/\`; each section says which, when, and how. The machine is a shared
2-core virtual machine: compare ratios measured in the same run, not absolute numbers across sections or days.
`;

export function writeSection(name, markdown) {
  const begin = `<!-- BEGIN ${name} -->`;
  const end = `<!-- END ${name} -->`;
  let text = existsSync(file) ? readFileSync(file, 'utf8') : header;
  if (!text.startsWith('# Benchmarks')) text = header;
  const block = `${begin}\n${markdown.trim()}\n${end}`;
  const start = text.indexOf(begin);
  const stop = text.indexOf(end);
  text =
    start !== -1 && stop > start
      ? text.slice(0, start) + block + text.slice(stop + end.length)
      : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
}

import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { codeSpans, readDoc, repositoryRoot, tablesOf } from '../support/markdown.js';

/**
 * The command line against its documentation. The commands and flags come from the CLI's own definitions
 * (commander's tree, src/cli/); README.md's "Command line" table must show each one, and every `switchboard …`
 * written anywhere in README.md and docs/ must be a real command with real flags and the right number of arguments.
 */

const program = buildProgram();

function leafCommands(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  return command.commands.flatMap((sub) => {
    const subPath = [...path, sub.name()];
    return sub.commands.length === 0 ? [{ path: subPath, command: sub }] : leafCommands(sub, subPath);
  });
}

const leaves = leafCommands(program);
const nameOf = (path: string[]) => `switchboard ${path.join(' ')}`;
const visibleFlags = (command: Command) =>
  command.options.filter((option) => !option.hidden).map((option) => option.long as string);

/** Flags every command takes: the README says so once, above the table, instead of in every row. */
const commonFlags = visibleFlags((leaves[0] as { command: Command }).command).filter((flag) =>
  leaves.every((leaf) => visibleFlags(leaf.command).includes(flag)),
);

interface Usage {
  /** Where it was written, for the failure message. */
  where: string;
  text: string;
  /** The command it resolves to, after `switchboard` and as many words as name subcommands. */
  command: Command;
  path: string[];
  flags: string[];
  positionals: string[];
}

/** Reads `accounts set-limits NAME [--rpm N]` starting from `from`; undefined when the first word is not a command. */
function parseUsage(text: string, from: Command, fromPath: string[], where: string): Usage | undefined {
  // `<key or id>` is one argument written in words; `…` stands for one left out.
  const words = text
    .replace(/<[^>]*>/g, 'ARGUMENT')
    .replace(/[[\]]/g, ' ')
    .split(/\s+/)
    .filter((word) => word !== '');
  // A trailing `…` is "and so on" (`switchboard keys create …`), not a left-out argument.
  if (words.length > 1 && ['…', '...'].includes(words[words.length - 1] as string)) words.pop();
  let command = from;
  const path = [...fromPath];
  while (words.length > 0) {
    const sub = command.commands.find((candidate) => candidate.name() === words[0]);
    if (!sub) break;
    command = sub;
    path.push(words.shift() as string);
  }
  if (command === from) return undefined;
  const flags: string[] = [];
  const positionals: string[] = [];
  while (words.length > 0) {
    const word = words.shift() as string;
    if (!word.startsWith('--')) {
      positionals.push(word);
      continue;
    }
    const flag = word.split('=')[0] as string;
    flags.push(flag);
    const option = command.options.find((candidate) => candidate.long === flag);
    const takesValue = option !== undefined && (option.required || option.optional);
    if (takesValue && !word.includes('=') && words.length > 0 && !(words[0] as string).startsWith('--')) words.shift();
  }
  return { where, text, command, path, flags, positionals };
}

/** README.md's "Command line" table: each row's first cell, `switchboard group sub …` and `other-sub …` after a `/`. */
function readmeUsages(): Usage[] {
  const table = tablesOf(readDoc('README.md')).find((candidate) =>
    candidate.headings.some((heading) => heading.text === 'Command line'),
  );
  if (!table) throw new Error('README.md has no table under "Command line"');
  const usages: Usage[] = [];
  for (const row of table.rows) {
    const [first, ...others] = codeSpans(row.cells[0] ?? '');
    const where = `README.md line ${row.line}`;
    const usage = first?.startsWith('switchboard ') ? parseUsage(first.slice(12), program, [], where) : undefined;
    if (!usage) throw new Error(`${where}: "${first}" is not a switchboard command`);
    usages.push(usage);
    // `switchboard users list` / `set-password EMAIL`: the later ones are siblings of the first.
    const parentPath = usage.path.slice(0, -1);
    const parent = parentPath.reduce(
      (command, name) => command.commands.find((sub) => sub.name() === name) as Command,
      program,
    );
    for (const other of others) {
      const sibling = parseUsage(other, parent, parentPath, where);
      if (!sibling) throw new Error(`${where}: "${other}" is not a subcommand of ${nameOf(parentPath)}`);
      usages.push(sibling);
    }
  }
  return usages;
}

/** Every `switchboard …` written in README.md and docs/*.md: in code spans, and on lines of code blocks. */
function writtenUsages(): Usage[] {
  const files = ['README.md', ...readdirSync(path.join(repositoryRoot, 'docs')).map((file) => `docs/${file}`)].filter(
    (file) => file.endsWith('.md'),
  );
  const usages = new Map<string, Usage>();
  for (const file of files) {
    readDoc(file)
      .split('\n')
      .forEach((line, index) => {
        const where = `${file} line ${index + 1}`;
        const candidates = [...codeSpans(line), line.replace(/\s#\s.*$/, '')];
        for (const candidate of candidates) {
          for (const match of candidate.matchAll(
            /(?:^|[\s(`])(?:npx |bin\/)?switchboard ((?:[a-z][\w-]*)(?:[^`|;&)]*))/g,
          )) {
            const usage = parseUsage(match[1] as string, program, [], where) ?? {
              where,
              text: match[0],
              command: program,
              path: [],
              flags: [],
              positionals: [],
            };
            // A code span is also part of its line: one report for both.
            usages.set(
              `${where} ${usage.path.join(' ')} ${usage.flags.join(' ')} ${usage.positionals.join(' ')}`,
              usage,
            );
          }
        }
      });
  }
  return [...usages.values()];
}

describe('the command line and its documentation', () => {
  const documented = readmeUsages();

  it('finds the commands of the CLI', () => {
    expect(leaves.map((leaf) => leaf.path.join(' '))).toEqual(
      expect.arrayContaining(['serve', 'accounts create', 'keys create', 'logs', 'users invite', 'models fetch']),
    );
    expect(commonFlags).toEqual(expect.arrayContaining(['--config', '--data-dir', '--json']));
  });

  it('shows every command in the README', () => {
    const shown = new Set(documented.map((usage) => usage.path.join(' ')));
    expect(leaves.map((leaf) => leaf.path.join(' ')).filter((path) => !shown.has(path))).toEqual([]);
  });

  it("shows every command's flags in the README, the flags of every command once above the table", () => {
    const readme = readDoc('README.md');
    const intro = readme.slice(readme.indexOf('## Command line'), readme.indexOf('| Command'));
    expect(commonFlags.filter((flag) => !codeSpans(intro).some((span) => span.split(' ')[0] === flag))).toEqual([]);
    const missing: string[] = [];
    for (const leaf of leaves) {
      const shownFlags = new Set(documented.filter((usage) => usage.command === leaf.command).flatMap((u) => u.flags));
      for (const flag of visibleFlags(leaf.command)) {
        if (!commonFlags.includes(flag) && !shownFlags.has(flag)) missing.push(`${nameOf(leaf.path)} ${flag}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('writes only real commands and flags, with as many arguments as they take, in README.md and docs/', () => {
    const wrong: string[] = [];
    for (const usage of [...documented, ...writtenUsages()]) {
      if (usage.path.length === 0) {
        wrong.push(`${usage.where}: "${usage.text.trim()}" is not a switchboard command`);
        continue;
      }
      const known = new Set([...usage.command.options.map((option) => option.long), '--help']);
      for (const flag of usage.flags) {
        if (!known.has(flag)) wrong.push(`${usage.where}: ${nameOf(usage.path)} has no ${flag}`);
      }
      const argumentsTaken = usage.command.registeredArguments;
      const required = argumentsTaken.filter((argument) => argument.required).length;
      // Prose may name a command alone (`switchboard users invite` prints a link); a usage names all its arguments.
      const count = usage.positionals.length;
      if (count > argumentsTaken.length || (count > 0 && count < required)) {
        wrong.push(
          `${usage.where}: ${nameOf(usage.path)} takes ${argumentsTaken.length} arguments, written with ${count}`,
        );
      }
    }
    expect([...new Set(wrong)]).toEqual([]);
  });

  it('writes every usage in the README table with all its arguments', () => {
    const short = documented
      .filter((usage) => usage.positionals.length < usage.command.registeredArguments.filter((a) => a.required).length)
      .map((usage) => `${usage.where}: ${nameOf(usage.path)}`);
    expect(short).toEqual([]);
  });
});

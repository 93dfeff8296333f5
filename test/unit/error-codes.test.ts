import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiError, toApiError, upstreamRejectedRequest } from '../../src/errors/api-error.js';
import { anthropicShapeOf, type ErrorCode, type ErrorCodeEntry, errorCodes } from '../../src/errors/error-codes.js';
import { anthropicStreamError } from '../../src/errors/render-anthropic.js';
import { openAiStreamError, renderOpenAiError } from '../../src/errors/render-openai.js';
import { codeSpans, readDoc, repositoryRoot, tablesOf } from '../support/markdown.js';

const codes = Object.keys(errorCodes) as ErrorCode[];

describe('the error-code table', () => {
  it('renders every code with its status and type, in OpenAI shape', () => {
    for (const code of codes) {
      const rendered = renderOpenAiError(apiError(code, `message of ${code}`, { param: 'model' }), 'req_1');
      const entry: { status: number; type: string; wireCode?: string | null } = errorCodes[code];
      expect(rendered.status, code).toBe(entry.status);
      expect(rendered.headers['x-request-id']).toBe('req_1');
      expect(JSON.parse(rendered.body), code).toEqual({
        error: {
          message: `message of ${code}`,
          type: entry.type,
          param: 'model',
          code: entry.wireCode === undefined ? code : entry.wireCode,
        },
      });
    }
  });

  it('passes an upstream refusal on with its own status, type and code', () => {
    const error = upstreamRejectedRequest({ status: 422, type: 'invalid_request_error', code: 'bad_thing' }, 'no');
    expect(JSON.parse(renderOpenAiError(error).body).error).toMatchObject({ code: 'bad_thing' });
    expect(renderOpenAiError(error).status).toBe(422);
    expect(upstreamRejectedRequest({ status: 400 }, 'no').code).toBeNull();
  });

  it('turns anything unexpected into an opaque 500 that keeps its cause', () => {
    const cause = new Error('secret detail');
    const error = toApiError(cause);
    expect(error.status).toBe(500);
    expect(error.message).not.toContain('secret');
    expect(error.cause).toBe(cause);
  });

  it('frames errors inside started streams for each surface', () => {
    expect(openAiStreamError(apiError('upstream_error', 'gone'))).toMatch(/^data: \{"error":\{.*\}\}\n\n$/);
    expect(anthropicStreamError(apiError('upstream_overloaded', 'busy'))).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n',
    );
  });
});

/**
 * The error-code table against the documentation: docs/api.md's "Every error code" and docs/management-api.md's
 * "Errors" list each code once, with its status, type and the code clients see; any `status code` written in the
 * docs is a real pair.
 */
describe('the error-code table and the documentation', () => {
  const referenceTables = ['docs/api.md', 'docs/management-api.md'].flatMap((file) =>
    tablesOf(readDoc(file))
      .filter((table) => table.header[0] === 'Code')
      .map((table) => ({ file, table })),
  );
  const wireCodeOf = (code: ErrorCode): string => {
    const entry: ErrorCodeEntry = errorCodes[code];
    return entry.wireCode === undefined ? code : String(entry.wireCode);
  };

  it('lists every code once, with its status, type and the code sent', () => {
    const listed: string[] = [];
    const wrong: string[] = [];
    for (const { file, table } of referenceTables) {
      for (const row of table.rows) {
        const [code, sentAs] = codeSpans(row.cells[0] ?? '');
        const where = `${file} line ${row.line}`;
        if (code === undefined || !(code in errorCodes)) {
          wrong.push(`${where}: ${code} is not in src/errors/error-codes.ts`);
          continue;
        }
        listed.push(code);
        const entry = errorCodes[code as ErrorCode];
        if (row.cells[1] !== String(entry.status))
          wrong.push(`${where}: ${code} is ${entry.status}, not ${row.cells[1]}`);
        if (codeSpans(row.cells[2] ?? '')[0] !== entry.type) wrong.push(`${where}: ${code} has type ${entry.type}`);
        const wire = wireCodeOf(code as ErrorCode);
        if ((sentAs ?? code) !== wire) wrong.push(`${where}: ${code} is sent as ${wire}, documented ${sentAs ?? code}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(listed.filter((code, index) => listed.indexOf(code) !== index)).toEqual([]);
    expect(codes.filter((code) => !listed.includes(code))).toEqual([]);
  });

  it('writes only real status and code pairs anywhere in README.md and docs/', () => {
    const types = new Set(
      codes.flatMap((code) => [errorCodes[code].type, anthropicShapeOf(errorCodes[code].status).type]),
    );
    const wrong: string[] = [];
    for (const file of ['README.md', ...readdirSync(path.join(repositoryRoot, 'docs')).map((name) => `docs/${name}`)]) {
      if (!file.endsWith('.md')) continue;
      for (const span of codeSpans(readDoc(file))) {
        const pair = /^(\d{3}) ([a-z][a-z_]*)$/.exec(span);
        if (!pair) continue;
        const [status, word] = [Number(pair[1]), pair[2] as string];
        const sending = codes.filter((code) => wireCodeOf(code) === word);
        if (sending.length === 0 && !types.has(word)) wrong.push(`${file}: \`${span}\`: no such code or type`);
        if (sending.length > 0 && !sending.some((code) => errorCodes[code].status === status)) {
          wrong.push(`${file}: \`${span}\`: ${word} is ${errorCodes[sending[0] as ErrorCode].status}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("says how each status reads on /v1/messages, as Anthropic's status and type", () => {
    const table = tablesOf(readDoc('docs/api.md')).find((candidate) => candidate.header[0] === 'Gateway status');
    const wrong: string[] = [];
    const documentedStatuses = new Set<number>();
    for (const row of table?.rows ?? []) {
      for (const status of (row.cells[0] ?? '').match(/\b\d{3}\b/g)?.map(Number) ?? []) {
        documentedStatuses.add(status);
        const shape = anthropicShapeOf(status);
        const written = {
          status: row.cells[1] === 'same' ? status : Number(row.cells[1]),
          type: codeSpans(row.cells[2] ?? '')[0],
        };
        if (shape.status !== written.status || shape.type !== written.type) {
          wrong.push(`docs/api.md line ${row.line}: ${status} reads as ${shape.status} ${shape.type}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    // 499 is logged, never sent.
    const sent = new Set(codes.map((code) => errorCodes[code].status).filter((status) => status !== 499));
    expect([...sent].filter((status) => !documentedStatuses.has(status))).toEqual([]);
  });

  it('never tells clients of a code they cannot see (one sent as another, or as null)', () => {
    const hidden = codes.filter((code) => wireCodeOf(code) !== code);
    const wrong: string[] = [];
    for (const table of tablesOf(readDoc('docs/api.md'))) {
      const column = table.header.findIndex((cell) => ['`code`', '`error.code`'].includes(cell));
      if (column < 0) continue;
      for (const row of table.rows) {
        for (const span of codeSpans(row.cells[column] ?? '')) {
          if ((hidden as string[]).includes(span)) wrong.push(`docs/api.md line ${row.line}: ${span}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

it('has no row that nothing raises', () => {
  const sources = readdirSync(path.join(repositoryRoot, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('error-codes.ts'))
    .map((file) => readFileSync(path.join(repositoryRoot, 'src', file), 'utf8'))
    .join('\n');
  expect(codes.filter((code) => !sources.includes(`'${code}'`))).toEqual([]);
});

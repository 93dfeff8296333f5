import { describe, expect, it } from 'vitest';
import {
  countInputTokens,
  estimateInputTokens,
  imageTokens,
  pdfPageTokens,
} from '../../src/api/v1/messages/count-tokens.js';
import { validateCountTokensRequest } from '../../src/api/v1/messages/validate-request.js';
import type { ChatCompletionRequest } from '../../src/openai/types.js';
import { messagesFixture } from '../support/messages-fixtures.js';

const request = (fields: Record<string, unknown>) =>
  validateCountTokensRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields });

/** A PDF whose page tree names `pages` page objects. */
const pdf = (pages: number) =>
  Buffer.from(
    `%PDF-1.4\n1 0 obj << /Type /Pages /Count ${pages} >> endobj\n${'2 0 obj << /Type /Page >> endobj\n'.repeat(pages)}`,
  ).toString('base64');

describe('count_tokens estimate', () => {
  it('counts about four characters a token over everything in the prompt, never 0', () => {
    // "hi" and 4 characters for the message: 6 characters.
    expect(estimateInputTokens(request({}))).toBe(2);
    // A final assistant turn may be empty (the only empty message Anthropic takes): still 1, never 0.
    expect(estimateInputTokens(request({ messages: [{ role: 'assistant', content: '' }] }))).toBe(1);
    const text = 'x'.repeat(400);
    const base = estimateInputTokens(request({ messages: [{ role: 'user', content: text }] }));
    expect(base).toBe(101);
    expect(estimateInputTokens(request({ system: text, messages: [{ role: 'user', content: text }] }))).toBe(201);
    const tools = [{ name: 't', description: text, input_schema: { type: 'object' } }];
    expect(estimateInputTokens(request({ tools, messages: [{ role: 'user', content: text }] }))).toBeGreaterThan(200);
  });

  it('counts images and PDF pages at their documented fixed costs', () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
    const document = (data: string) => ({
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data },
    });
    const tokensOf = (content: unknown[]) => estimateInputTokens(request({ messages: [{ role: 'user', content }] }));
    expect(tokensOf([image, image])).toBe(1 + 2 * imageTokens);
    expect(tokensOf([document(pdf(3))])).toBe(1 + 3 * pdfPageTokens);
    // A PDF that hides its page objects counts as one page.
    expect(tokensOf([document(Buffer.from('%PDF-1.7 compressed').toString('base64'))])).toBe(1 + pdfPageTokens);
    // Images inside tool results count too.
    expect(
      estimateInputTokens(
        request({
          messages: [
            { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Read', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [image] }] },
          ],
        }),
      ),
    ).toBeGreaterThan(imageTokens);
  });

  it('gives a realistic Claude Code request a count in proportion to its size', () => {
    const body = messagesFixture('claude-code-request.json');
    const tokens = estimateInputTokens(validateCountTokensRequest(body));
    // One image, plus text of roughly a quarter of its characters.
    expect(tokens).toBeGreaterThan(imageTokens + 200);
    expect(tokens).toBeLessThan(imageTokens + JSON.stringify(body).length / 3);
  });

  it('uses a model’s own tokenizer when one is given, on the request as that model receives it', async () => {
    let seen: ChatCompletionRequest | undefined;
    const counted = await countInputTokens(request({ system: 'be brief' }), async (chat) => {
      seen = chat;
      return 17;
    });
    expect(counted).toEqual({ input_tokens: 17 });
    expect(seen?.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ]);
    expect(await countInputTokens(request({}))).toEqual({ input_tokens: 2 });
  });
});

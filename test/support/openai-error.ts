import { expect } from 'vitest';
import { jsonOf } from './gateway.js';

export interface OpenAiErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** Every non-2xx of an OpenAI endpoint: JSON content type, a request id, and exactly the four OpenAI error fields. */
export async function expectOpenAiError(response: Response, status: number): Promise<OpenAiErrorBody> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json(; charset=utf-8)?$/);
  expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  const body = await jsonOf(response);
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(typeof body.error.message).toBe('string');
  return body.error;
}

import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/server/cancellation.js';
import { readJsonBody } from '../../src/server/read-body.js';

describe('reading a request body', () => {
  it('leaves no listener on the request once read (it lives as long as the response, a whole stream)', async () => {
    const request = Object.assign(new PassThrough(), { headers: {} }) as unknown as IncomingMessage & PassThrough;
    const cancellation = new Cancellation();
    const read = readJsonBody(request, 1024, cancellation);
    request.end('{"model":"m","messages":[]}');
    expect((await read).value).toEqual({ model: 'm', messages: [] });
    expect(request.listenerCount('data')).toBe(0);
    expect(request.listenerCount('end')).toBe(0);
  });
});

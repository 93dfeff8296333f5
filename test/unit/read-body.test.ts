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

  it('tells a body cut short from a whole one whose client left before it was read', async () => {
    const fakeRequest = (complete: boolean) =>
      Object.assign(new PassThrough(), { headers: {}, complete }) as unknown as IncomingMessage & PassThrough;
    const cancellation = new Cancellation();
    cancellation.abort('client_closed');
    await expect(readJsonBody(fakeRequest(false), 1024, cancellation)).rejects.toMatchObject({
      errorCode: 'incomplete_body',
    });
    // The whole body arrived, then the client left while its key was looked up: a cancelled request.
    await expect(readJsonBody(fakeRequest(true), 1024, cancellation)).rejects.toMatchObject({
      code: 'client_closed_request',
      status: 499,
    });
    const reading = fakeRequest(false);
    const leaving = new Cancellation();
    const read = readJsonBody(reading, 1024, leaving);
    reading.write('{"model":');
    Object.assign(reading, { complete: true });
    leaving.abort('client_closed');
    await expect(read).rejects.toMatchObject({ code: 'client_closed_request' });
  });
});

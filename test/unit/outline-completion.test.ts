import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { outlineCompletion } from '../../src/openai/outline-completion.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');

/** Upstream bodies recorded for the conformance suite (test/fixtures/conformance/openai). */
function recordedBody(name: string): string {
  const fixture = JSON.parse(readFileSync(`test/fixtures/conformance/openai/${name}.json`, 'utf8'));
  return JSON.stringify(fixture.upstream.response.json);
}

describe('outline of a chat.completion body', () => {
  // Only a body that says it is a chat.completion is relayed as it came; the caller names any other one.
  it('reads the usage of recorded completions, as JSON.parse does', () => {
    for (const name of ['text', 'tools', 'usage', 'json-schema', 'length']) {
      const text = recordedBody(name);
      expect(outlineCompletion(bytes(text))?.usage, name).toEqual(JSON.parse(text).usage);
    }
  });

  it('agrees with JSON.parse on any completion-shaped object, compact or indented', () => {
    const completion = fc.record({
      before: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
      choices: fc.array(
        fc.record({
          index: fc.nat(),
          message: fc.record({ role: fc.constant('assistant'), content: fc.option(fc.string()) }),
          finish_reason: fc.constantFrom('stop', 'length', null),
          logprobs: fc.jsonValue(),
        }),
        { maxLength: 3 },
      ),
      usage: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 5 }),
      after: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
    });
    fc.assert(
      fc.property(completion, fc.boolean(), ({ before, choices, usage, after }, indent) => {
        const { choices: _c, usage: _u, error: _e, object: _o, ...others } = { ...before, ...after };
        const object = { ...others, object: 'chat.completion', choices, usage };
        const text = JSON.stringify(object, null, indent ? 2 : undefined);
        const outline = outlineCompletion(bytes(text));
        // A top-level name written with an escape is left to JSON.parse (by design); every other body is read.
        const escapedName = Object.keys(object).some((name) => JSON.stringify(name).includes('\\'));
        if (outline === undefined) expect(escapedName).toBe(true);
        else expect(outline.usage).toEqual(JSON.parse(text).usage);
      }),
      { numRuns: 1000 },
    );
  });

  it('never takes a truncated body for a completion', () => {
    const text = recordedBody('tools');
    for (let length = 0; length < text.length; length++) {
      expect(outlineCompletion(bytes(text.slice(0, length))), `first ${length} bytes`).toBeUndefined();
    }
  });

  it('leaves anything but the plain shape to a full parse', () => {
    const plain = '{"id":"c","object":"chat.completion","choices":[],"usage":{"prompt_tokens":1}}';
    expect(outlineCompletion(bytes(plain))?.usage).toEqual({ prompt_tokens: 1 });
    const unusual = [
      '[]',
      'null',
      '{"choices":[],"usage":{}}', // no object: named by the caller
      '{"object":"chat.completion.chunk","choices":[],"usage":{}}', // another object
      '{"object":null,"choices":[],"usage":{}}',
      '{"object":"chat.completion","choices":[]}', // no usage
      '{"choices":[],"usage":null}',
      '{"choices":{},"usage":{}}', // choices not an array
      '{"usage":{}}',
      '{"error":{"message":"x"},"choices":[],"usage":{}}',
      '{"choices":[],"us\\u0061ge":{"prompt_tokens":1},"usage":{}}', // one name, two spellings
      '{"choices":[],"usage":{}} trailing',
      '{"choices":[],"usage":{},}',
      '{"choices":[}],"usage":{}}', // brackets closed out of order
      '{"choices":[],"usage":{"a":}}', // usage that does not parse
      '{"choices" [],"usage":{}}',
      '{,"choices":[],"usage":{}}',
    ];
    for (const text of unusual) expect(outlineCompletion(bytes(text)), text).toBeUndefined();
  });

  it('skips strings whatever they hold: quotes, backslashes, brackets, other scripts', () => {
    const content = 'He said \\"{[usage]}\\" and left \\\\ a backslash 😀 ünïcödé';
    const choice = `{"index":0,"message":{"content":"${content}"},"finish_reason":"stop"}`;
    const text = `{"object":"chat.completion","choices":[${choice}],"usage":{"total_tokens":7}}`;
    expect(JSON.parse(text).choices[0].message.content).toContain('"{[usage]}"');
    expect(outlineCompletion(bytes(text))?.usage).toEqual({ total_tokens: 7 });
  });

  it('leaves a choice the SDKs could not read as it is to a full parse (which completes or refuses it)', () => {
    const message = '{"role":"assistant","content":"Hi"}';
    const call = '{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}';
    const plain = `{"index":0,"message":${message},"finish_reason":"stop"}`;
    const withCalls = `{"index":0,"message":{"content":null,"tool_calls":[${call}]},"finish_reason":"tool_calls"}`;
    const completion = (choices: string) => `{"object":"chat.completion","choices":[${choices}],"usage":{}}`;
    expect(outlineCompletion(bytes(completion(`${plain}, ${withCalls}`)))).toBeDefined();
    const unreadable = [
      '{}',
      `{"message":${message},"finish_reason":"stop"}`, // no index
      `{"index":0,"message":${message}}`, // no finish_reason
      `{"index":0,"finish_reason":"stop"}`, // no message
      `{"index":0,"message":null,"finish_reason":"stop"}`,
      `{"index":-1,"message":${message},"finish_reason":"stop"}`,
      `{"index":0.5,"message":${message},"finish_reason":"stop"}`,
      `{"index":"0","message":${message},"finish_reason":"stop"}`,
      `{"index":0,"message":{"tool_calls":[null]},"finish_reason":"stop"}`,
      `{"index":0,"message":{"tool_calls":[{"function":null}]},"finish_reason":"stop"}`,
      `{"index":0,"message":{"tool_calls":{}},"finish_reason":"stop"}`,
      `${plain}, null`,
    ];
    for (const choices of unreadable) expect(outlineCompletion(bytes(completion(choices))), choices).toBeUndefined();
  });

  it('leaves repeated usage or choices members to JSON.parse (which keeps the last)', () => {
    expect(
      outlineCompletion(bytes('{"choices":[],"usage":{"total_tokens":1},"usage":{"total_tokens":2}}')),
    ).toBeUndefined();
    expect(outlineCompletion(bytes('{"choices":[],"choices":[],"usage":{"total_tokens":1}}'))).toBeUndefined();
  });
});

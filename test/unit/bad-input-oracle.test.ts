import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fieldName, pointsInto } from '../support/bad-input-oracle.js';
import { pathsOf } from '../support/json-mutation.js';

/**
 * The generated bad-input tests' reading of the field an error names: whatever a member is called (dots, brackets,
 * quotes, spaces, digits, nothing), the name the gateway writes for it leads back into the request.
 */

describe('pointsInto', () => {
  it.each(['openai', 'anthropic'] as const)(
    'finds every value of any JSON document by its %s field name',
    (surface) => {
      fc.assert(
        fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), (document) => {
          for (const path of pathsOf(document)) {
            expect(pointsInto(document, fieldName(path, surface), true), JSON.stringify(path)).toBe(true);
          }
        }),
        { seed: 20261127, numRuns: 500 },
      );
    },
  );

  it('reads the keys that broke the split on dots and brackets', () => {
    const request = { metadata: { ' ] ': [], 'a.b': 'x', 'it\'s "q"': 'y', '[0]': 'z', '': 'e' } };
    for (const key of Object.keys(request.metadata)) expect(pointsInto(request, `metadata.${key}`, true)).toBe(true);
    expect(pointsInto(request, 'metadata. ] ', true)).toBe(true);
  });

  it('still refuses names that are not in the request', () => {
    const request = { messages: [{ role: 'user', content: 'hi' }], metadata: { a: 'x' } };
    expect(pointsInto(request, 'messages[0].content')).toBe(true);
    expect(pointsInto(request, 'messages.0.content', true)).toBe(true);
    // A missing last member is the field the error is about; a missing one before it is not in the request.
    expect(pointsInto(request, 'messages[0].name')).toBe(true);
    expect(pointsInto(request, 'messages[0].name', true)).toBe(false);
    expect(pointsInto(request, 'messages[1].content')).toBe(false);
    expect(pointsInto(request, 'messages[3]')).toBe(true);
    expect(pointsInto(request, 'messages[3]', true)).toBe(false);
    expect(pointsInto(request, 'metadata.b.c')).toBe(false);
    expect(pointsInto(request, 'tools[0].function')).toBe(false);
    expect(pointsInto(request, '')).toBe(false);
  });
});

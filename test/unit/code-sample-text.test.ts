import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { codeSample } from '../../console/src/code-sample-text.js';

/** The words bash passes to curl for the console's curl sample (a function named curl prints them, one per line). */
function curlWords(sample: string): string[] {
  const output = execFileSync('bash', ['-c', `curl() { printf '%s\\0' "$@"; }\n${sample}`], { encoding: 'utf8' });
  return output.split('\0').slice(0, -1);
}

describe('the console code samples', () => {
  it('pass a model name with quotes, dollars and backticks to curl as one JSON value, nothing expanded', () => {
    const model = `it's "$(echo expanded)" \`echo expanded\` $HOME`;
    const words = curlWords(codeSample('curl', 'http://127.0.0.1:8080/v1', 'sk-test-key', model));
    expect(words[0]).toBe('http://127.0.0.1:8080/v1/chat/completions');
    expect(words.slice(1, 5)).toEqual([
      '-H',
      'Authorization: Bearer sk-test-key',
      '-H',
      'Content-Type: application/json',
    ]);
    expect(words[5]).toBe('-d');
    expect(JSON.parse(words[6] as string)).toEqual({ model, messages: [{ role: 'user', content: 'Hello!' }] });
    expect(words).toHaveLength(7);
  });

  it('quote the model for Python and JavaScript as a string literal of the language', () => {
    const model = `it's "quoted"`;
    expect(codeSample('python', 'http://h/v1', 'k', model)).toContain(`model=${JSON.stringify(model)},`);
    expect(codeSample('javascript', 'http://h/v1', 'k', model)).toContain(`model: ${JSON.stringify(model)},`);
  });
});

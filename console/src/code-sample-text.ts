/**
 * The first call with a new key as text to paste: the same chat completion in curl, Python and JavaScript. Every value
 * is quoted for its language, so a model name with a quote in it (the operator's config) still pastes as one value.
 */

export type SampleLanguage = 'curl' | 'python' | 'javascript';

export function codeSample(language: SampleLanguage, baseUrl: string, key: string, model: string): string {
  const json = (value: string) => JSON.stringify(value);
  switch (language) {
    case 'curl':
      return [
        `curl ${shellQuoted(`${baseUrl}/chat/completions`)} \\`,
        `  -H ${shellQuoted(`Authorization: Bearer ${key}`)} \\`,
        '  -H "Content-Type: application/json" \\',
        `  -d ${shellQuoted(`{"model": ${json(model)}, "messages": [{"role": "user", "content": "Hello!"}]}`)}`,
      ].join('\n');
    case 'python':
      return [
        '# pip install openai',
        'from openai import OpenAI',
        '',
        'client = OpenAI(',
        `    base_url=${json(baseUrl)},`,
        `    api_key=${json(key)},`,
        ')',
        'completion = client.chat.completions.create(',
        `    model=${json(model)},`,
        '    messages=[{"role": "user", "content": "Hello!"}],',
        ')',
        'print(completion.choices[0].message.content)',
      ].join('\n');
    case 'javascript':
      return [
        '// npm install openai',
        "import OpenAI from 'openai';",
        '',
        'const client = new OpenAI({',
        `  baseURL: ${json(baseUrl)},`,
        `  apiKey: ${json(key)},`,
        '});',
        'const completion = await client.chat.completions.create({',
        `  model: ${json(model)},`,
        "  messages: [{ role: 'user', content: 'Hello!' }],",
        '});',
        'console.log(completion.choices[0].message.content);',
      ].join('\n');
  }
}

/** One shell word, single-quoted: nothing inside is expanded; a quote is closed, escaped and reopened. */
function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

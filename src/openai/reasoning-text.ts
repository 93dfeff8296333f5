/**
 * The reasoning text of an OpenAI-compatible chat message or stream delta. Servers name it differently:
 * `reasoning_content` (DeepSeek, vLLM, llama.cpp, the gateway's own adapters) or `reasoning` (OpenRouter, Ollama,
 * Groq, newer vLLM, which for a while sends both with the same text); read once, the first one that holds text.
 */
export function reasoningText(fields: Readonly<Record<string, unknown>>): string | undefined {
  for (const value of [fields.reasoning_content, fields.reasoning]) {
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

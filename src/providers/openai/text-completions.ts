import { synthesizeTextChunks } from '../../openai/synthesize-text-stream.js';
import type { TextCompletion, TextCompletionRequest } from '../../openai/text-completion-types.js';
import { isEventStream } from '../http.js';
import type { HttpTransport } from '../http-provider.js';
import type { TextCompletionCall, TextCompletionResult, TextStreamItems } from '../provider.js';
import { parseChoicesObject, readChoiceChunks } from './choices.js';

/**
 * Legacy text completions from an OpenAI-compatible server's `/completions`, forwarded: the client's request with the
 * model name changed and, when streaming, usage always requested (as chat does), so the log and limits never see a
 * stream without usage. `echo`, `logprobs`, `suffix`, `best_of` and members the gateway does not know go as they came.
 */

export function completeTextWithOpenAi(
  providerName: string,
  headers: Readonly<Record<string, string>>,
  call: TextCompletionCall,
  transport: HttpTransport,
): Promise<TextCompletionResult> {
  return transport.postForBody(
    { path: `${transport.basePath}/completions`, headers, body: textCompletionBody(call) },
    call,
    (bytes) => {
      const { completion, filledIn } = parseTextCompletion(providerName, bytes.toString('utf8'));
      // A completion the upstream named otherwise (or not at all), or whose choices lacked something, reaches the
      // client as what it is, serialized again.
      if (completion.object === 'text_completion' && !filledIn) return { completion, raw: bytes };
      completion.object = 'text_completion';
      return { completion };
    },
  );
}

export async function streamTextWithOpenAi(
  providerName: string,
  headers: Readonly<Record<string, string>>,
  call: TextCompletionCall,
  transport: HttpTransport,
): Promise<TextStreamItems> {
  const response = await transport.postForStream(
    { path: `${transport.basePath}/completions`, headers, body: textCompletionBody(call) },
    call,
  );
  if (isEventStream(response)) return readChoiceChunks<TextCompletion>(providerName, response, 'text');
  // The upstream ignored stream: true and answered with one JSON completion: streamed by the gateway.
  const text = await response.text();
  return synthesizeTextChunks(parseTextCompletion(providerName, text).completion).map((chunk) => ({ chunk }));
}

/** The upstream body: the client's bytes when nothing must change, else the request with what must change. */
export function textCompletionBody(call: TextCompletionCall): string | Buffer {
  const request = call.request;
  const upstreamModel = call.model.upstreamModel;
  const stream = request.stream === true;
  const usageAsked = !stream || request.stream_options?.include_usage === true;
  if (call.body && usageAsked && request.model === upstreamModel) return call.body;
  const body: TextCompletionRequest = { ...request, model: upstreamModel };
  if (stream) body.stream_options = { ...(request.stream_options ?? {}), include_usage: true };
  return JSON.stringify(body);
}

export function parseTextCompletion(
  providerName: string,
  text: string,
): { completion: TextCompletion; filledIn: boolean } {
  return parseChoicesObject<TextCompletion>(providerName, text, 'completion', 'text');
}

import { apiError } from '../../../errors/api-error.js';
import { synthesizeTextChunks, textChunkHasContent } from '../../../openai/synthesize-text-stream.js';
import type { TextCompletionRequest } from '../../../openai/text-completion-types.js';
import type {
  Provider,
  TextCompletionCall,
  TextCompletionResult,
  TextStreamItem,
} from '../../../providers/provider.js';
import {
  type AttemptContext,
  type DispatchOperation,
  deploymentCall,
  type PreparedCall,
} from '../../../routing/operation.js';
import { primeItems } from '../../../routing/prime-stream.js';
import type { Deployment } from '../../../routing/router.js';

/**
 * Legacy text completions as dispatch operations. A deployment whose provider has no text-completions API (Anthropic,
 * Gemini) is refused before any call, so another deployment or a fallback may serve; when none can, the client gets
 * that refusal: 400 unsupported_endpoint.
 */

function noTextCompletions(request: TextCompletionRequest, provider: Provider) {
  return apiError(
    'unsupported_endpoint',
    `The model \`${request.model}\` is served by provider "${provider.name}" (${provider.type}), which has no legacy text completions (raw prompts); use /v1/chat/completions.`,
    { param: 'model' },
  );
}

function callFor(
  request: TextCompletionRequest,
  body: Buffer | undefined,
  deployment: Deployment,
  context: AttemptContext,
): TextCompletionCall {
  return {
    request,
    ...deploymentCall(deployment, context),
    ...(body === undefined ? {} : { body }),
  };
}

export function textCompletionOperation(
  request: TextCompletionRequest,
  body: Buffer | undefined,
): DispatchOperation<TextCompletionResult> {
  return {
    model: request.model,
    prepare(deployment, context): PreparedCall<TextCompletionResult> {
      const provider = deployment.provider;
      const completeText = provider.completeText;
      if (!completeText) throw noTextCompletions(request, provider);
      const call = callFor(request, body, deployment, context);
      return { dropped: [], send: () => completeText.call(provider, call) };
    },
  };
}

/**
 * A stream held until its first text (or its end), so failures before any text fail over. A model configured with
 * `streaming: false` is asked for a whole completion, streamed by the gateway.
 */
export function textStreamOperation(
  request: TextCompletionRequest,
  body: Buffer | undefined,
  onFailure: (error: unknown) => void,
): DispatchOperation<AsyncIterable<TextStreamItem>> {
  const hasContent = (item: TextStreamItem) => textChunkHasContent(item.chunk);
  return {
    model: request.model,
    prepare(deployment, context): PreparedCall<AsyncIterable<TextStreamItem>> {
      const provider = deployment.provider;
      const { completeText, streamText } = provider;
      if (!completeText || !streamText) throw noTextCompletions(request, provider);
      const send = async () => {
        if (deployment.model.streaming) {
          const items = await streamText.call(provider, callFor(request, body, deployment, context));
          return primeItems(items, hasContent, onFailure);
        }
        const { stream: _stream, stream_options: _options, ...whole } = request;
        const { completion } = await completeText.call(
          provider,
          callFor(whole as TextCompletionRequest, undefined, deployment, context),
        );
        return primeItems(
          synthesizeTextChunks(completion).map((chunk): TextStreamItem => ({ chunk })),
          hasContent,
          onFailure,
        );
      };
      return { dropped: [], send };
    },
  };
}

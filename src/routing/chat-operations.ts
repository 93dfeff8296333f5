import { synthesizeChunks } from '../openai/synthesize-stream.js';
import type { ChatCompletionRequest } from '../openai/types.js';
import type { CompletionResult, ProviderCall, StreamItem } from '../providers/provider.js';
import { contextWindowError } from './context-window.js';
import type { AttemptContext, DispatchOperation, PreparedCall } from './operation.js';
import { applyParameterSupport } from './parameters.js';
import { primeStream } from './prime-stream.js';
import type { Deployment } from './router.js';

/** Chat completions as dispatch operations: a whole completion, or a stream primed up to its first content. */

/** The provider call for one deployment: the request with what the deployment cannot take removed. */
function prepareChatCall(
  request: ChatCompletionRequest,
  body: Buffer | undefined,
  deployment: Deployment,
  context: AttemptContext,
): { call: ProviderCall; dropped: readonly string[] } {
  const prepared = applyParameterSupport(request, deployment.model, deployment.provider);
  const call: ProviderCall = {
    request: prepared.request,
    model: deployment.model,
    timeouts: deployment.timeouts,
    signal: context.signal,
    accountId: context.accountId,
    // Removing a parameter changed the request: its original bytes no longer say the same thing.
    body: prepared.request === request ? body : undefined,
  };
  return { call, dropped: prepared.dropped };
}

export function chatCompletionOperation(
  request: ChatCompletionRequest,
  body: Buffer | undefined,
): DispatchOperation<CompletionResult> {
  return {
    model: request.model,
    refuseRoute: (route) => contextWindowError(request, route.model),
    prepare(deployment, context): PreparedCall<CompletionResult> {
      const { call, dropped } = prepareChatCall(request, body, deployment, context);
      return { dropped, send: () => deployment.provider.complete(call) };
    },
  };
}

/**
 * A stream that has produced its first content chunk (or ended) without failing, so failures before any content fail
 * over. A model configured with `streaming: false` is asked for a complete answer, streamed by the gateway.
 */
export function chatStreamOperation(
  request: ChatCompletionRequest,
  body: Buffer | undefined,
  /** Told of a failure after the stream was primed (reported in-band by the caller; recorded by dispatch). */
  onFailure: (error: unknown) => void,
): DispatchOperation<AsyncIterable<StreamItem>> {
  return {
    model: request.model,
    refuseRoute: (route) => contextWindowError(request, route.model),
    prepare(deployment, context): PreparedCall<AsyncIterable<StreamItem>> {
      const { call, dropped } = prepareChatCall(request, body, deployment, context);
      const send = async () => {
        if (deployment.model.streaming) return primeStream(await deployment.provider.stream(call), onFailure);
        const { stream: _stream, stream_options: _options, ...whole } = call.request;
        const { body: _body, ...rest } = call;
        const { completion } = await deployment.provider.complete({ ...rest, request: whole as ChatCompletionRequest });
        return primeStream(
          synthesizeChunks(completion).map((chunk): StreamItem => ({ chunk })),
          onFailure,
        );
      };
      return { dropped, send };
    },
  };
}

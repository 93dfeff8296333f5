import type { ProviderType } from '../config/schema.js';
import type { ApiError } from '../errors/api-error.js';
import type { UpstreamHeaders, UpstreamResponse } from '../upstream/client.js';
import { type ErrorParser, postForBody, postUpstream, type UpstreamPost } from './http.js';
import type {
  CompletionResult,
  DeploymentCall,
  EmbeddingCall,
  EmbeddingResult,
  ForwardCall,
  ForwardedApi,
  Provider,
  ProviderCall,
  ProviderDependencies,
  StreamItems,
  TextCompletionCall,
  TextCompletionResult,
  TextStreamItems,
} from './provider.js';

/**
 * The skeleton every HTTP provider shares: where its API lives, one POST per call through the UpstreamClient, the
 * provider's own error parser for error statuses, and the answer read whole (completions) or as a stream. A provider
 * folder supplies only what is its own: the request it sends, and how it reads the answer.
 */

export interface HttpProviderSettings {
  name: string;
  type: ProviderType;
  baseUrl: string;
  maxConnections: number;
  maxConnectionsPerAccount: number;
}

/** What one call sends: a path under the base URL's path, headers and body. */
export interface UpstreamRequest {
  path: string;
  headers: Readonly<Record<string, string>>;
  body: string | Buffer;
}

/** The skeleton's POSTs, for what a provider sends besides chat (embeddings, legacy completions). */
export interface HttpTransport {
  /** The base URL's path without a trailing slash. */
  readonly basePath: string;
  /** One POST whose 2xx body is read whole by `read`; error statuses become the provider's errors. */
  postForBody<Result>(request: UpstreamRequest, call: DeploymentCall, read: (body: Buffer) => Result): Promise<Result>;
  /** One POST whose 2xx response comes back with its body unread (a stream). */
  postForStream(request: UpstreamRequest, call: DeploymentCall): Promise<UpstreamResponse>;
}

export interface HttpProviderSpec {
  settings: HttpProviderSettings;
  /** The provider's error body as an ApiError (see upstream-error.ts for the policy every provider shares). */
  parseError: (providerName: string, status: number, headers: UpstreamHeaders, text: string) => ApiError;
  /** The upstream request for a call; `basePath` is the base URL's path without a trailing slash. */
  request(call: ProviderCall, stream: boolean, basePath: string): UpstreamRequest;
  /** A successful non-streaming answer, read from its bytes. */
  readCompletion(body: Buffer, call: ProviderCall): CompletionResult;
  /** A successful streaming answer, as chunks. */
  readStream(response: UpstreamResponse, call: ProviderCall): StreamItems | Promise<StreamItems>;
  unsupportedParameters?: Provider['unsupportedParameters'];
  replacedValues?: Provider['replacedValues'];
  /** Embeddings, for providers whose upstream has an embeddings API. */
  embed?(call: EmbeddingCall, transport: HttpTransport): Promise<EmbeddingResult>;
  embeddingRefusal?: Provider['embeddingRefusal'];
  /** Legacy text completions, for providers whose upstream has that API. */
  completeText?(call: TextCompletionCall, transport: HttpTransport): Promise<TextCompletionResult>;
  streamText?(call: TextCompletionCall, transport: HttpTransport): Promise<TextStreamItems>;
  /** The APIs requests may be forwarded to as they came, and the headers (with the gateway's key) each needs. */
  forwarding?: {
    apis: readonly ForwardedApi[];
    headers(call: ForwardCall): Readonly<Record<string, string>>;
  };
}

export function createHttpProvider(spec: HttpProviderSpec, dependencies: ProviderDependencies): Provider {
  const { settings } = spec;
  const url = new URL(settings.baseUrl);
  const origin = url.origin;
  const basePath = url.pathname.replace(/\/+$/, '');
  const parseError: ErrorParser = (status, headers, text) => spec.parseError(settings.name, status, headers, text);

  /** A call's request as the UpstreamClient takes it: with the pool's settings and whose call it is. */
  function upstreamPost(
    request: UpstreamRequest,
    call: Pick<ProviderCall, 'signal' | 'timeouts' | 'accountId'>,
  ): UpstreamPost {
    return {
      origin,
      path: request.path,
      headers: request.headers,
      body: request.body,
      signal: call.signal,
      timeouts: call.timeouts,
      pool: settings.name,
      maxConnections: settings.maxConnections,
      maxConnectionsPerAccount: settings.maxConnectionsPerAccount,
      account: call.accountId,
    };
  }

  function post(call: ProviderCall, stream: boolean): UpstreamPost {
    return upstreamPost(spec.request(call, stream, basePath), call);
  }

  const provider: Provider = {
    name: settings.name,
    type: settings.type,

    // Not async: one promise fewer per request (building the request cannot throw an error of its own).
    complete(call: ProviderCall): Promise<CompletionResult> {
      return postForBody(dependencies.upstream, settings.name, post(call, false), parseError, (body) =>
        spec.readCompletion(body, call),
      );
    },

    async stream(call: ProviderCall): Promise<StreamItems> {
      const response = await postUpstream(dependencies.upstream, settings.name, post(call, true), parseError);
      return spec.readStream(response, call);
    },
  };
  if (spec.unsupportedParameters) provider.unsupportedParameters = spec.unsupportedParameters;
  if (spec.replacedValues) provider.replacedValues = spec.replacedValues;
  const transport: HttpTransport = {
    basePath,
    postForBody: (request, call, read) =>
      postForBody(dependencies.upstream, settings.name, upstreamPost(request, call), parseError, read),
    postForStream: (request, call) =>
      postUpstream(dependencies.upstream, settings.name, upstreamPost(request, call), parseError),
  };
  const { embed, completeText, streamText } = spec;
  if (embed) provider.embed = (call) => embed(call, transport);
  if (spec.embeddingRefusal) provider.embeddingRefusal = spec.embeddingRefusal;
  if (completeText) provider.completeText = (call) => completeText(call, transport);
  if (streamText) provider.streamText = (call) => streamText(call, transport);
  const forwarding = spec.forwarding;
  if (forwarding) {
    const forwardPost = (call: ForwardCall) =>
      upstreamPost(
        {
          path: call.query ? `${basePath}/${call.api}?${call.query}` : `${basePath}/${call.api}`,
          headers: forwarding.headers(call),
          body: call.body,
        },
        call,
      );
    Object.assign(provider, {
      forwards: forwarding.apis,
      forward: (call: ForwardCall) => postUpstream(dependencies.upstream, settings.name, forwardPost(call), parseError),
      // One undici dispatch for the whole answer: cheaper than a response stream read to its end.
      forwardWhole: (call: ForwardCall) =>
        postForBody(dependencies.upstream, settings.name, forwardPost(call), parseError, (body) => body),
    } satisfies Pick<Provider, 'forwards' | 'forward' | 'forwardWhole'>);
  }
  return provider;
}

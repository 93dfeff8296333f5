import type { ResponseObject, ResponsesRequest } from './types.js';

/**
 * The response object before anything is generated: every field the Open Responses schema requires, with the
 * request's settings echoed and OpenAI's defaults where the request left them out (schema-validating clients reject
 * a response that omits them). Built once per request; the stream's lifecycle events and the final answer copy it.
 */

export interface ResponseIdentity {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  model: string;
}

export function createResponseObject(request: ResponsesRequest, identity: ResponseIdentity): ResponseObject {
  return {
    id: identity.id,
    object: 'response',
    created_at: identity.createdAt,
    status: 'in_progress',
    background: false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: request.max_tool_calls ?? null,
    model: identity.model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    prompt_cache_key: request.prompt_cache_key ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: summarySetting(request) },
    safety_identifier: request.safety_identifier ?? null,
    service_tier: request.service_tier ?? 'default',
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: { format: request.text?.format ?? { type: 'text' }, verbosity: request.text?.verbosity ?? 'medium' },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_logprobs: request.top_logprobs ?? 0,
    top_p: request.top_p ?? 1,
    presence_penalty: request.presence_penalty ?? 0,
    frequency_penalty: request.frequency_penalty ?? 0,
    truncation: request.truncation ?? 'disabled',
    usage: null,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}

/** `reasoning.summary`, or the deprecated `reasoning.generate_summary` that means the same. */
export function summarySetting(request: ResponsesRequest): string | null {
  const reasoning = request.reasoning;
  const summary = reasoning?.summary ?? reasoning?.generate_summary;
  return typeof summary === 'string' ? summary : null;
}

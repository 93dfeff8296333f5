import { topLevelMembers } from '../../../json/json-bytes.js';

/**
 * The client's Messages body for an Anthropic upstream: the same bytes with only the `model` value replaced by the
 * deployment's upstream name, so thinking blocks, signatures, `cache_control` and fields the gateway has never heard
 * of reach Anthropic exactly as sent (whitespace, key order and escapes included). The body is parsed and serialized
 * again only when the bytes cannot be edited safely: `model` named twice (parsers disagree on which one counts), not a
 * string, or the object nested deeper than the byte walk follows; `reserialized` says so (for a metric or the log).
 */

export interface RewrittenBody {
  body: Buffer;
  reserialized: boolean;
}

const quote = 0x22;

export function rewriteModel(body: Buffer, model: string): RewrittenBody {
  const members = topLevelMembers(body);
  const models = members?.filter((member) => member.name === 'model') ?? [];
  const only = models[0];
  if (members && models.length === 1 && only && body[only.valueStart] === quote) {
    const replacement = JSON.stringify(model);
    if (body.toString('utf8', only.valueStart, only.valueEnd) === replacement) return { body, reserialized: false };
    return {
      body: Buffer.concat([body.subarray(0, only.valueStart), Buffer.from(replacement), body.subarray(only.valueEnd)]),
      reserialized: false,
    };
  }
  const value = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  value.model = model;
  return { body: Buffer.from(JSON.stringify(value)), reserialized: true };
}

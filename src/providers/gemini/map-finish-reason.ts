/**
 * Gemini `finishReason` -> OpenAI `finish_reason`. Gemini has no "tool calls" reason (a candidate that called
 * functions finishes with STOP), so a candidate with function calls is reported as `tool_calls` by the caller.
 */
export function mapFinishReason(finishReason: string | undefined, calledFunctions: boolean): string {
  if (calledFunctions && (finishReason === undefined || finishReason === 'STOP')) return 'tool_calls';
  switch (finishReason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'LANGUAGE':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
    case 'MODEL_ARMOR':
      return 'content_filter';
    default:
      // STOP, and reasons with no OpenAI counterpart (OTHER, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, …).
      return 'stop';
  }
}

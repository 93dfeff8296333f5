import { ApiFailure } from './api.js';

/**
 * Errors as sentences a person reads. The API's messages are written for developers calling it ("from must be earlier
 * than to", "Invalid body field 'name': Too big…", "dailyBudgetUsd is bounded…"); the console shows the same facts
 * with field names in words, a capital letter and a full stop, and says what to do about a server failure.
 */

/** Field names the API uses in messages, as the console's forms label them. */
const fieldWords: Record<string, string> = {
  requestsPerMinute: 'the requests-per-minute limit',
  tokensPerMinute: 'the tokens-per-minute limit',
  concurrentRequests: 'the concurrent-requests limit',
  dailyBudgetUsd: 'the daily budget',
  monthlyBudgetUsd: 'the monthly budget',
  expiresAt: 'the expiry',
  expiresInDays: 'the expiry',
  gracePeriodSeconds: 'the grace period',
  logBodies: 'body logging',
  from: 'the start time',
  to: 'the end time',
};

/** "expiresAt" → "expires at"; a known field → its words. */
export function fieldInWords(name: string): string {
  const last = name.split('.').pop() ?? name;
  return fieldWords[last] ?? `the ${last.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()}`;
}

/** A capital first letter and a closing full stop. */
export function asSentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return trimmed;
  const capitalised = trimmed[0]?.toUpperCase() + trimmed.slice(1);
  return /[.!?…)]$/.test(capitalised) ? capitalised : `${capitalised}.`;
}

function fromApi(failure: ApiFailure): string {
  if (failure.status === 0) return failure.message;
  let text = failure.message;
  // The management API's validation errors: "Invalid body field 'name': Too big: expected string to have <=64 characters"
  const invalid = /^Invalid (?:body|query|path)(?: field '([^']+)')?: (.*)$/s.exec(text);
  if (invalid) {
    const detail = (invalid[2] ?? '').replace(/^./, (first) => first.toLowerCase());
    text = invalid[1] ? `${fieldInWords(invalid[1])} is not valid: ${detail}` : `the request is not valid: ${detail}`;
  } else if (text === 'from must be earlier than to') {
    text = 'the start time must be earlier than the end time';
  } else {
    // A message that starts with a field name ("dailyBudgetUsd is bounded…", "from must be earlier than to").
    text = text.replace(/^([a-z][A-Za-z]*)(?= (?:is|must|are) )/, (name) =>
      name in fieldWords ? (fieldWords[name] ?? name) : name,
    );
    text = text.replace(
      /\b(requestsPerMinute|tokensPerMinute|concurrentRequests|dailyBudgetUsd|monthlyBudgetUsd)\b/g,
      (name) => (fieldWords[name] ?? name).replace(/^the /, ''),
    );
  }
  const sentence = asSentence(text);
  if (failure.status >= 500) {
    return `The server could not do this (error ${failure.status}): ${sentence} Try again; if it keeps failing, tell the operator.`;
  }
  return sentence;
}

/** What the console says for anything thrown while talking to the server or checking a form. */
export function readableMessage(error: unknown): string {
  if (error instanceof ApiFailure) return fromApi(error);
  if (error instanceof Error) return asSentence(error.message);
  return asSentence(String(error));
}

import { z } from 'zod';

/**
 * What the translation of a `GenerateContentResponse` (whole, or one stream event) reads, typed: the candidates and
 * their parts as objects, the strings it copies into the chat completion (model, ids, thought signatures) as strings.
 * Values it only tests (`text`, `thought`, `finishReason`, the usage counts) may be anything.
 */

const logprobCandidate = z.looseObject({ token: z.string().nullish(), logProbability: z.number().nullish() });

const part = z.looseObject({
  thoughtSignature: z.string().nullish(),
  functionCall: z.looseObject({}).nullish(),
});

const candidate = z.looseObject({
  index: z.int().min(0).nullish(),
  content: z.looseObject({ parts: z.array(part).nullish() }).nullish(),
  logprobsResult: z
    .looseObject({
      chosenCandidates: z.array(logprobCandidate).nullish(),
      topCandidates: z.array(z.looseObject({ candidates: z.array(logprobCandidate).nullish() }).nullish()).nullish(),
    })
    .nullish(),
});

export const geminiResponseShape = z.looseObject({
  candidates: z.array(candidate).nullish(),
  promptFeedback: z.looseObject({}).nullish(),
  usageMetadata: z.looseObject({}).nullish(),
  modelVersion: z.string().nullish(),
  responseId: z.string().nullish(),
});

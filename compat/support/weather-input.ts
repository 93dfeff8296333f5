import { jsonSchema } from 'ai';

/** The input of the mock's get_weather tool, as the AI SDK's tools declare it (the mock calls it for Paris). */
export const weatherInput = jsonSchema<{ city: string; unit?: string }>({
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string' } },
  required: ['city'],
});

import type { ServerResponse } from 'node:http';
import type { DispatchTrace } from '../../../routing/trace.js';

/** Names the parameters the serving model could not take (x-switchboard-dropped-parameters), before the response starts. */
export function announceDroppedParameters(response: ServerResponse, trace: DispatchTrace): void {
  if (trace.droppedParameters.length > 0 && !response.headersSent) {
    response.setHeader('x-switchboard-dropped-parameters', trace.droppedParameters.join(', '));
  }
}

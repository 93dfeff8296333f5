import type { ServerResponse } from 'node:http';
import type { DispatchTrace } from '../../../routing/trace.js';

/** Names the parameters the serving model could not take (x-switchboard-dropped-parameters), before the response starts. */
export function announceDroppedParameters(response: ServerResponse, trace: DispatchTrace): void {
  if (trace.droppedParameters.length > 0 && !response.headersSent) {
    // Names can come from the request (a tool's type): anything a header cannot carry is replaced, never thrown on.
    const names = trace.droppedParameters.join(', ').replace(/[^\x20-\x7e]/g, '?');
    response.setHeader('x-switchboard-dropped-parameters', names);
  }
}

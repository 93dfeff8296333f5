/** `models/{name}` unless the configured name already is a resource path (models/…, tunedModels/…). */
export function modelPath(upstreamModel: string): string {
  return upstreamModel.includes('/') ? upstreamModel : `models/${upstreamModel}`;
}

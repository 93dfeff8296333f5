/**
 * The parts of the OpenAI embeddings wire format the gateway reads or writes itself (POST /v1/embeddings). Like the
 * chat types they are open: members the gateway does not know pass through to OpenAI-compatible upstreams.
 */

/** A string, strings, one token array, or token arrays (each a list of token ids). */
export type EmbeddingInput = string | string[] | number[] | number[][];

export type EmbeddingEncoding = 'float' | 'base64';

export interface EmbeddingRequest {
  model: string;
  input: EmbeddingInput;
  encoding_format?: EmbeddingEncoding | null;
  dimensions?: number | null;
  user?: string | null;
  [field: string]: unknown;
}

export interface Embedding {
  object: 'embedding';
  index: number;
  /** Floats, or base64 of their little-endian float32 bytes (encoding_format: base64). */
  embedding: number[] | string;
  [field: string]: unknown;
}

export interface EmbeddingUsage {
  prompt_tokens: number;
  total_tokens: number;
  [field: string]: unknown;
}

export interface EmbeddingList {
  object: 'list';
  data: Embedding[];
  model: string;
  usage?: EmbeddingUsage | null;
  [field: string]: unknown;
}

/** Whether the inputs are token arrays rather than texts. */
export function isTokenInput(inputs: string[] | number[][]): inputs is number[][] {
  return inputs.length > 0 && Array.isArray(inputs[0]);
}

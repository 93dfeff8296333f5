import { writeFileSync } from 'node:fs';

/**
 * Writes a tiny llama-architecture GGUF with random weights (about 0.5 MB) that llama.cpp loads and runs at thousands
 * of tokens per second: the local provider's tests exercise real loading, templating, tokenization, sampling,
 * streaming and cancellation without downloading anything.
 *
 * The vocabulary makes token counts predictable: special tokens, the 256 byte-fallback tokens, "▁" (a space) and one
 * token per printable ASCII character, and no merges, so a text of N ASCII characters is exactly N tokens (a newline
 * is the byte token <0x0A>). The output rows of special tokens and of bytes other than a newline are zero, so greedy
 * decoding never picks them: generated text is printable ASCII, and the model never ends its turn on its own (tests
 * make it do so with logit_bias on <|im_end|>).
 */

export const tinyTokens = { unknown: 0, bos: 1, eos: 2, imStart: 3, imEnd: 4 } as const;

/** ChatML, without SmolLM2's injected default system prompt, so counts stay easy to derive. */
export const tinyChatTemplate =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** Tokens of `text` under the tiny vocabulary: one per character (ASCII, space or newline). */
export function tinyTokenCount(text: string): number {
  return [...text].length;
}

/** Prompt tokens the tiny template produces for these messages (each special marker is one token). */
export function tinyPromptTokens(messages: Array<{ role: string; content: string }>): number {
  let count = 0;
  for (const message of messages) count += 1 + tinyTokenCount(`${message.role}\n${message.content}`) + 1 + 1;
  return count + 1 + tinyTokenCount('assistant\n');
}

const ggufType = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 } as const;

type MetadataValue =
  | { type: 'uint32'; value: number }
  | { type: 'int32'; value: number }
  | { type: 'float32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'array'; itemType: 'string'; value: string[] }
  | { type: 'array'; itemType: 'float32' | 'int32'; value: number[] };

class ByteWriter {
  private readonly parts: Buffer[] = [];
  length = 0;

  private push(buffer: Buffer): void {
    this.parts.push(buffer);
    this.length += buffer.length;
  }

  u32(value: number): void {
    const buffer = Buffer.alloc(4);
    buffer.writeUInt32LE(value);
    this.push(buffer);
  }

  i32(value: number): void {
    const buffer = Buffer.alloc(4);
    buffer.writeInt32LE(value);
    this.push(buffer);
  }

  u64(value: number): void {
    const buffer = Buffer.alloc(8);
    buffer.writeBigUInt64LE(BigInt(value));
    this.push(buffer);
  }

  f32(value: number): void {
    const buffer = Buffer.alloc(4);
    buffer.writeFloatLE(value);
    this.push(buffer);
  }

  string(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }

  bytes(buffer: Buffer): void {
    this.push(buffer);
  }

  pad(alignment: number): void {
    const remainder = this.length % alignment;
    if (remainder !== 0) this.push(Buffer.alloc(alignment - remainder));
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function writeValue(writer: ByteWriter, value: MetadataValue): void {
  if (value.type === 'uint32') writer.u32(value.value);
  else if (value.type === 'int32') writer.i32(value.value);
  else if (value.type === 'float32') writer.f32(value.value);
  else if (value.type === 'bool') writer.bytes(Buffer.from([value.value ? 1 : 0]));
  else if (value.type === 'string') writer.string(value.value);
  else {
    writer.u32(ggufType[value.itemType]);
    writer.u64(value.value.length);
    for (const item of value.value) {
      if (value.itemType === 'string') writer.string(item as string);
      else if (value.itemType === 'float32') writer.f32(item as number);
      else writer.i32(item as number);
    }
  }
}

/** Deterministic pseudo-random normals (mulberry32 + Box-Muller), so every run builds the same model. */
function normalGenerator(seed: number): () => number {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
}

interface Tensor {
  name: string;
  /** ggml order: the first dimension is the innermost (contiguous) one. */
  dims: number[];
  data: Float32Array;
}

export interface TinyGgufOptions {
  chatTemplate?: string | undefined;
  /**
   * Makes the model end its turn where it would otherwise write this character: <|im_end|> gets a copy of the
   * character's output row, scaled up, so it wins wherever the character would have.
   */
  endOfTurnLike?: string;
  contextLength?: number;
  seed?: number;
  /**
   * Declares the model an embedding model (`llama.pooling_type`, as embedding GGUFs do): llama.cpp then pools the
   * token states into one vector.
   */
  pooling?: 'mean' | 'cls' | 'last';
}

export function writeTinyGguf(file: string, options: TinyGgufOptions = {}): void {
  const tokens = ['<unk>', '<s>', '</s>', '<|im_start|>', '<|im_end|>'];
  const types = [2, 3, 3, 3, 3];
  for (let byte = 0; byte < 256; byte++) {
    tokens.push(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6);
  }
  tokens.push('\u2581');
  types.push(1);
  for (let code = 0x21; code <= 0x7e; code++) {
    tokens.push(String.fromCharCode(code));
    types.push(1);
  }
  const vocabulary = tokens.length;
  const scores = tokens.map((_, index) => (types[index] === 1 ? -1 : 0));

  const embedding = 64;
  const heads = 4;
  const kvHeads = 2;
  const headDimension = embedding / heads;
  const feedForward = 128;
  const layers = 2;
  const random = normalGenerator(options.seed ?? 1234);
  const matrix = (inner: number, outer: number, scale: number) =>
    Float32Array.from({ length: inner * outer }, () => random() * scale);
  const ones = (size: number) => new Float32Array(size).fill(1);

  const output = matrix(embedding, vocabulary, 1);
  const newlineToken = 5 + 0x0a;
  for (let token = 0; token < vocabulary; token++) {
    const generatable = types[token] === 1 || token === newlineToken;
    if (!generatable) output.fill(0, token * embedding, (token + 1) * embedding);
  }
  if (options.endOfTurnLike !== undefined) {
    const source = tokens.indexOf(options.endOfTurnLike);
    if (source === -1) throw new Error(`"${options.endOfTurnLike}" is not a token of the tiny vocabulary`);
    for (let index = 0; index < embedding; index++) {
      output[tinyTokens.imEnd * embedding + index] = 1.5 * (output[source * embedding + index] ?? 0);
    }
  }
  const tensors: Tensor[] = [
    { name: 'token_embd.weight', dims: [embedding, vocabulary], data: matrix(embedding, vocabulary, 1) },
    { name: 'output_norm.weight', dims: [embedding], data: ones(embedding) },
    { name: 'output.weight', dims: [embedding, vocabulary], data: output },
  ];
  for (let layer = 0; layer < layers; layer++) {
    const prefix = `blk.${layer}`;
    tensors.push(
      { name: `${prefix}.attn_norm.weight`, dims: [embedding], data: ones(embedding) },
      { name: `${prefix}.attn_q.weight`, dims: [embedding, embedding], data: matrix(embedding, embedding, 0.2) },
      {
        name: `${prefix}.attn_k.weight`,
        dims: [embedding, kvHeads * headDimension],
        data: matrix(embedding, kvHeads * headDimension, 0.2),
      },
      {
        name: `${prefix}.attn_v.weight`,
        dims: [embedding, kvHeads * headDimension],
        data: matrix(embedding, kvHeads * headDimension, 0.2),
      },
      { name: `${prefix}.attn_output.weight`, dims: [embedding, embedding], data: matrix(embedding, embedding, 0.2) },
      { name: `${prefix}.ffn_norm.weight`, dims: [embedding], data: ones(embedding) },
      { name: `${prefix}.ffn_gate.weight`, dims: [embedding, feedForward], data: matrix(embedding, feedForward, 0.2) },
      { name: `${prefix}.ffn_down.weight`, dims: [feedForward, embedding], data: matrix(feedForward, embedding, 0.2) },
      { name: `${prefix}.ffn_up.weight`, dims: [embedding, feedForward], data: matrix(embedding, feedForward, 0.2) },
    );
  }

  const metadata: Array<[string, MetadataValue]> = [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: 'switchboard-tiny-test' }],
    ['general.alignment', { type: 'uint32', value: 32 }],
    ['llama.context_length', { type: 'uint32', value: options.contextLength ?? 512 }],
    ['llama.embedding_length', { type: 'uint32', value: embedding }],
    ['llama.block_count', { type: 'uint32', value: layers }],
    ['llama.feed_forward_length', { type: 'uint32', value: feedForward }],
    ['llama.attention.head_count', { type: 'uint32', value: heads }],
    ['llama.attention.head_count_kv', { type: 'uint32', value: kvHeads }],
    ['llama.rope.dimension_count', { type: 'uint32', value: headDimension }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'float32', value: 1e-5 }],
    ['llama.vocab_size', { type: 'uint32', value: vocabulary }],
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: tokens }],
    ['tokenizer.ggml.scores', { type: 'array', itemType: 'float32', value: scores }],
    ['tokenizer.ggml.token_type', { type: 'array', itemType: 'int32', value: types }],
    ['tokenizer.ggml.bos_token_id', { type: 'uint32', value: tinyTokens.bos }],
    ['tokenizer.ggml.eos_token_id', { type: 'uint32', value: tinyTokens.imEnd }],
    ['tokenizer.ggml.unknown_token_id', { type: 'uint32', value: tinyTokens.unknown }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
    ['tokenizer.ggml.add_space_prefix', { type: 'bool', value: false }],
  ];
  if (options.pooling !== undefined) {
    metadata.push(['llama.pooling_type', { type: 'uint32', value: { mean: 1, cls: 2, last: 3 }[options.pooling] }]);
  }
  const template = options.chatTemplate === undefined ? tinyChatTemplate : options.chatTemplate;
  if (template) metadata.push(['tokenizer.chat_template', { type: 'string', value: template }]);

  const alignment = 32;
  const writer = new ByteWriter();
  writer.bytes(Buffer.from('GGUF', 'ascii'));
  writer.u32(3);
  writer.u64(tensors.length);
  writer.u64(metadata.length);
  for (const [key, value] of metadata) {
    writer.string(key);
    writer.u32(value.type === 'array' ? ggufType.array : ggufType[value.type]);
    writeValue(writer, value);
  }
  let offset = 0;
  for (const tensor of tensors) {
    writer.string(tensor.name);
    writer.u32(tensor.dims.length);
    for (const dimension of tensor.dims) writer.u64(dimension);
    writer.u32(0); // GGML_TYPE_F32
    writer.u64(offset);
    offset += Math.ceil(tensor.data.byteLength / alignment) * alignment;
  }
  writer.pad(alignment);
  for (const tensor of tensors) {
    writer.bytes(Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
    writer.pad(alignment);
  }
  writeFileSync(file, writer.toBuffer());
}

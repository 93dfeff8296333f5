/**
 * The output a native upstream's stream has given the client so far, for a stream that breaks before its terminal
 * event (whose response would carry it): the items its `response.output_item.done` events closed, as they were, and
 * the items still open with the text, refusal and arguments their deltas had brought, marked `incomplete`, as the
 * translated path keeps a broken stream's output. Ordered by `output_index`.
 */

type Item = Record<string, unknown>;

export interface NativeOutputCollector {
  /** Reads one event of the stream (its type and its parsed data). */
  push(type: string, data: Record<string, unknown>): void;
  /** The output so far; open items marked `incomplete`. */
  output(): Item[];
}

const isObject = (value: unknown): value is Item =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export function createNativeOutputCollector(): NativeOutputCollector {
  const items = new Map<number, { item: Item; done: boolean }>();

  const itemAt = (data: Record<string, unknown>): Item | undefined => {
    const index = data.output_index;
    const entry = typeof index === 'number' ? items.get(index) : undefined;
    return entry && !entry.done ? entry.item : undefined;
  };

  const partAt = (data: Record<string, unknown>): Item | undefined => {
    const item = itemAt(data);
    const index = data.content_index;
    if (!item || !Array.isArray(item.content) || typeof index !== 'number') return undefined;
    const part = item.content[index];
    return isObject(part) ? part : undefined;
  };

  const append = (target: Item | undefined, field: string, delta: unknown): void => {
    if (!target || typeof delta !== 'string') return;
    target[field] = (typeof target[field] === 'string' ? target[field] : '') + delta;
  };

  return {
    push(type, data) {
      const index = data.output_index;
      switch (type) {
        case 'response.output_item.added':
        case 'response.output_item.done':
          if (typeof index === 'number' && isObject(data.item)) {
            // Copied: the deltas below change it, never the event relayed.
            const item = structuredClone(data.item);
            if (type === 'response.output_item.added' && !Array.isArray(item.content) && item.type === 'message') {
              item.content = [];
            }
            items.set(index, { item, done: type === 'response.output_item.done' });
          }
          return;
        case 'response.content_part.added': {
          const item = itemAt(data);
          if (item && Array.isArray(item.content) && typeof data.content_index === 'number' && isObject(data.part)) {
            item.content[data.content_index] = structuredClone(data.part);
          }
          return;
        }
        case 'response.output_text.delta':
          return append(partAt(data), 'text', data.delta);
        case 'response.refusal.delta':
          return append(partAt(data), 'refusal', data.delta);
        case 'response.function_call_arguments.delta':
          return append(itemAt(data), 'arguments', data.delta);
      }
    },
    output() {
      return [...items.entries()]
        .sort(([first], [second]) => first - second)
        .map(([, { item, done }]) => {
          if (done) return item;
          const content = Array.isArray(item.content) ? item.content.filter(isObject) : undefined;
          return { ...item, ...(content ? { content } : {}), status: 'incomplete' };
        });
    },
  };
}

import { createHash } from 'node:crypto';

/**
 * Function names on the chat side of a translated call, and the way back. Chat completions has no namespaces and
 * allows names matching `^[a-zA-Z0-9_-]{1,64}$`, so:
 * - a flat function whose name already fits keeps it;
 * - a function of a `namespace` tool becomes `<namespace>__<name>` (the form Codex itself gives MCP tools);
 * - a name that still does not fit (other characters, more than 64 characters) or that another tool already took is
 *   cleaned to the allowed characters, cut to 55, and given `_` + 8 hex digits of the SHA-256 of namespace and name.
 * The way back never parses a name: the map remembers what each chat name stands for, so a namespace containing `__`
 * or a flat function named like a namespaced one cannot be confused.
 */

export interface ToolName {
  name: string;
  /** The `namespace` tool the function belongs to, when it does. */
  namespace?: string;
}

export interface ToolNameMap {
  /** The chat-side name of a function (of a namespace, when given). */
  toChat(name: string, namespace?: string): string;
  /** The function (and namespace) a chat tool call's name stands for; an unknown name comes back as it is. */
  fromChat(chatName: string): ToolName;
}

const chatNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

function keyOf(name: string, namespace: string | undefined): string {
  return namespace === undefined ? name : `${namespace}\u0000${name}`;
}

function hashedName(joined: string, key: string): string {
  const digest = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return `${joined.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 55)}_${digest}`;
}

function plainName(name: string, namespace: string | undefined): string {
  return namespace === undefined ? name : `${namespace}__${name}`;
}

/** The chat name a function gets when nothing else competes for it. */
function preferredName(name: string, namespace: string | undefined): string {
  const joined = plainName(name, namespace);
  return chatNamePattern.test(joined) ? joined : hashedName(joined, keyOf(name, namespace));
}

/** A map for the functions offered in one request; flat functions are named first, so they keep their names. */
export function createToolNameMap(functions: readonly ToolName[]): ToolNameMap {
  const byKey = new Map<string, string>();
  const byChatName = new Map<string, ToolName>();
  const assign = (tool: ToolName) => {
    const key = keyOf(tool.name, tool.namespace);
    if (byKey.has(key)) return;
    let chatName = preferredName(tool.name, tool.namespace);
    if (byChatName.has(chatName)) chatName = hashedName(plainName(tool.name, tool.namespace), key);
    byKey.set(key, chatName);
    byChatName.set(
      chatName,
      tool.namespace === undefined ? { name: tool.name } : { name: tool.name, namespace: tool.namespace },
    );
  };
  for (const tool of functions) if (tool.namespace === undefined) assign(tool);
  for (const tool of functions) if (tool.namespace !== undefined) assign(tool);

  return {
    toChat: (name, namespace) => byKey.get(keyOf(name, namespace)) ?? preferredName(name, namespace),
    fromChat: (chatName) => byChatName.get(chatName) ?? { name: chatName },
  };
}

import { readFileSync } from 'node:fs';

/** A file of test/fixtures/messages/, as text or parsed JSON. */
export function messagesFixtureText(name: string): string {
  return readFileSync(new URL(`../fixtures/messages/${name}`, import.meta.url), 'utf8');
}

// biome-ignore lint/suspicious/noExplicitAny: fixtures are arbitrary JSON that tests reshape freely
export function messagesFixture(name: string): any {
  return JSON.parse(messagesFixtureText(name));
}

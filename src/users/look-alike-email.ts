import { apiError } from '../errors/api-error.js';

/**
 * Look-alike letters in e-mail addresses (Unicode's UTS #39, "highly restrictive"): an address whose local part or a
 * domain label mixes scripts (a Cyrillic "а" in "pаypal"), holds a letter that looks exactly like an ASCII one (the
 * dotless "ı", a Unicode hyphen), or is written in another script wholly with letters that look Latin (Cyrillic
 * "асе" for "ace") could show on a screen exactly like another login's. Plain addresses of one script (Cyrillic
 * "почта", Greek, Japanese mixed with Latin as UTS #39 allows) are fine.
 *
 * Scripts come from unicode-properties (the Unicode Character Database's Script property); what a character looks
 * like from unhomoglyph (Unicode's confusables.txt, the "skeleton" of UTS #39). Both are loaded on first use: the
 * check runs when a login or an invitation is made, rarely.
 */

/** Why a part of an address is refused, or undefined when it is fine. */
export type LookAlikeFinding = { part: 'local part' | 'domain'; text: string; reason: string } | undefined;

/** Scripts that UTS #39 lets one identifier mix ("highly restrictive"). */
const allowedMixes: readonly ReadonlySet<string>[] = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];
const neutralScripts = new Set(['Common', 'Inherited', 'Unknown']);
const ascii = /^[\x20-\x7e]*$/;

interface UnicodeData {
  scriptOf: (character: string) => string;
  skeleton: (text: string) => string;
}

async function unicodeData(): Promise<UnicodeData> {
  const [properties, unhomoglyph] = await Promise.all([import('unicode-properties'), import('unhomoglyph')]);
  return {
    scriptOf: (character) => properties.getScript(character.codePointAt(0) ?? 0),
    skeleton: unhomoglyph.default,
  };
}

/** The first reason `text` (a local part or one domain label) could pass for other text, if any. */
function lookAlikeIn(text: string, data: UnicodeData): string | undefined {
  if (ascii.test(text)) return undefined;
  const scripts = new Set<string>();
  for (const character of text) {
    const script = data.scriptOf(character);
    if (!neutralScripts.has(script)) scripts.add(script);
    // A letter or mark whose look-alike is one ASCII character ("ı" for "i", "‐" for "-"); ligatures such as "æ",
    // whose skeleton is two letters, are their own letters.
    const skeleton = data.skeleton(character);
    if ((character.codePointAt(0) ?? 0) > 0x7e && skeleton.length === 1 && ascii.test(skeleton)) {
      if (script === 'Latin' || neutralScripts.has(script)) {
        return `"${character}" looks like the ASCII "${skeleton}"`;
      }
    }
  }
  const named = [...scripts].sort();
  if (scripts.size > 1 && !allowedMixes.some((mix) => named.every((script) => mix.has(script)))) {
    return `it mixes the ${named.join(' and ')} scripts`;
  }
  if (scripts.size === 1 && !scripts.has('Latin') && ascii.test(data.skeleton(text))) {
    return `it is written in ${named[0]} letters that all look like Latin ones ("${data.skeleton(text)}")`;
  }
  return undefined;
}

/** The first look-alike in a folded address (see normaliseEmail), or undefined when there is none. */
export async function findLookAlike(email: string): Promise<LookAlikeFinding> {
  const at = email.lastIndexOf('@');
  const localPart = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (ascii.test(localPart) && ascii.test(domain)) return undefined;
  const data = await unicodeData();
  const localReason = lookAlikeIn(localPart, data);
  if (localReason) return { part: 'local part', text: localPart, reason: localReason };
  for (const label of domain.split('.')) {
    const reason = lookAlikeIn(label, data);
    if (reason) return { part: 'domain', text: label, reason };
  }
  return undefined;
}

/** Refuses (400 invalid_email, naming `param`) a folded address with a look-alike; see findLookAlike. */
export async function refuseLookAlikeEmail(email: string, param = 'email'): Promise<void> {
  const finding = await findLookAlike(email);
  if (!finding) return;
  throw apiError(
    'invalid_email',
    `"${email.slice(0, 64)}" could be mistaken for another address: in its ${finding.part} "${finding.text.slice(0, 64)}", ` +
      `${finding.reason}. Use the address in one script, as its holder types it.`,
    { param },
  );
}

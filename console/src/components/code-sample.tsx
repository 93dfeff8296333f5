import { useId, useRef, useState } from 'preact/hooks';
import { codeSample, type SampleLanguage } from '../code-sample-text.js';

/**
 * The first call with a new key, ready to paste: the API's base URL and the same chat completion in curl, Python
 * and JavaScript (the official openai libraries, pointed at this gateway), so a holder never needs the CLI's
 * first-run text. Shown only in the dialog that shows the key once.
 */

const languageNames: Record<SampleLanguage, string> = { curl: 'curl', python: 'Python', javascript: 'JavaScript' };

export function apiBaseUrl(): string {
  return `${window.location.origin}/v1`;
}

export function CodeSamples(props: { apiKey: string; model: string }) {
  const [language, setLanguage] = useState<SampleLanguage>('curl');
  const [copied, setCopied] = useState<string>();
  const code = useRef<HTMLPreElement>(null);
  const baseId = useId();
  const baseUrl = apiBaseUrl();
  const text = codeSample(language, baseUrl, props.apiKey, props.model);
  const languages = Object.keys(languageNames) as SampleLanguage[];
  const copy = async (value: string, what: string) => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(`${what} copied to the clipboard.`);
    } catch {
      const selection = window.getSelection();
      if (code.current && selection) selection.selectAllChildren(code.current);
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return (
    <section class="code-samples" aria-label="Use the key">
      <label class="field">
        <span>API base URL</span>
        <div class="secret-row">
          <input
            class="base-url"
            readOnly
            value={baseUrl}
            spellcheck={false}
            data-testid="api-base-url"
            onFocus={(event) => event.currentTarget.select()}
          />
          <button type="button" class="button small" onClick={() => copy(baseUrl, 'The base URL')}>
            Copy URL
          </button>
        </div>
      </label>
      <div class="tabs" role="tablist" aria-label="Code sample language">
        {languages.map((candidate) => (
          <button
            key={candidate}
            type="button"
            role="tab"
            id={`${baseId}-${candidate}`}
            aria-selected={candidate === language}
            aria-controls={`${baseId}-panel`}
            tabIndex={candidate === language ? 0 : -1}
            class={candidate === language ? 'tab selected' : 'tab'}
            onClick={() => setLanguage(candidate)}
            onKeyDown={(event) => {
              if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
              const next =
                languages[
                  (languages.indexOf(language) + (event.key === 'ArrowRight' ? 1 : languages.length - 1)) %
                    languages.length
                ] ?? 'curl';
              setLanguage(next);
              document.getElementById(`${baseId}-${next}`)?.focus();
            }}
          >
            {languageNames[candidate]}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${baseId}-panel`} aria-labelledby={`${baseId}-${language}`}>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: keyboard users scroll a long sample */}
        <pre class="body code-sample" tabIndex={0} ref={code} data-testid="code-sample">
          {text}
        </pre>
        <button type="button" class="button small" onClick={() => copy(text, `The ${languageNames[language]} sample`)}>
          Copy {languageNames[language]} sample
        </button>
        <span class="copy-status" aria-live="polite">
          {copied ?? ''}
        </span>
      </div>
    </section>
  );
}

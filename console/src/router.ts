import { useEffect, useState } from 'preact/hooks';

/**
 * A small history-API router: the console's URLs are real paths under /console/, so they can be bookmarked and
 * shared, and the gateway serves index.html for every one of them.
 */

export const base = '/console';

export interface Location {
  /** Path below /console, starting with "/". */
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const path = window.location.pathname.startsWith(base)
    ? window.location.pathname.slice(base.length) || '/'
    : window.location.pathname;
  return { path, query: new URLSearchParams(window.location.search) };
}

const changeEvent = 'switchboard:navigate';

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${base}${to}`;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new Event(changeEvent));
}

/**
 * The current location, read from window.location on every render (so a component re-rendered by its parent never
 * shows a stale path), with a re-render on every navigation.
 */
export function useLocation(): Location {
  const [, setVersion] = useState(0);
  const rendered = window.location.href;
  useEffect(() => {
    const update = () => setVersion((version) => version + 1);
    window.addEventListener('popstate', update);
    window.addEventListener(changeEvent, update);
    // A child may have navigated during this commit, before this listener existed.
    if (window.location.href !== rendered) update();
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(changeEvent, update);
    };
  }, [rendered]);
  return current();
}

/** Matches "/accounts/:accountId/keys" against a path; returns the named segments or undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const patternParts = pattern.split('/').filter(Boolean);
  const pathParts = path.split('/').filter(Boolean);
  if (patternParts.length !== pathParts.length) return undefined;
  const result: Record<string, string> = {};
  for (let index = 0; index < patternParts.length; index++) {
    const expected = patternParts[index] as string;
    const actual = pathParts[index] as string;
    if (expected.startsWith(':')) result[expected.slice(1)] = decodeURIComponent(actual);
    else if (expected !== actual) return undefined;
  }
  return result;
}

import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { readableMessage } from '../error-text.js';
import { formatRelative, formatTime } from '../format.js';
import { base, navigate } from '../router.js';
import { useAction } from '../use-action.js';

/** A link inside the console: real href (middle-click, copy link work), client-side navigation on plain clicks. */
export function Link(props: {
  href: string;
  class?: string;
  title?: string;
  children: ComponentChildren;
  'aria-current'?: 'page';
}) {
  return (
    <a
      href={`${base}${props.href}`}
      class={props.class}
      title={props.title}
      aria-current={props['aria-current']}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

export function PageHeader(props: { title: string; description?: ComponentChildren; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · Switchboard`;
  }, [props.title]);
  return (
    <header class="page-header">
      <div>
        <h1>{props.title}</h1>
        {props.description && <p class="page-description">{props.description}</p>}
      </div>
      {props.children && <div class="page-actions">{props.children}</div>}
    </header>
  );
}

export function ErrorMessage(props: { error: unknown }) {
  if (!props.error) return null;
  const message = readableMessage(props.error);
  return (
    <p class="error-message" role="alert">
      {message}
    </p>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <p class="loading" aria-live="polite">
      {props.label ?? 'Loading…'}
    </p>
  );
}

/**
 * Data a page loads, once it is there: "Loading…" until then, or nothing while the load failed (the page shows the
 * error in its ErrorMessage).
 */
export function Loaded<T>(props: {
  state: { data: T | undefined; error: unknown };
  children: (data: T) => ComponentChildren;
}) {
  const data = props.state.data;
  if (!data) return props.state.error ? null : <Loading />;
  return <>{props.children(data)}</>;
}

/** An identifier (an error code, a deployment) that may break after its underscores and slashes, never mid-word. */
export function Breakable(props: { text: string }) {
  const parts = props.text.split(/(?<=[_/.])/);
  return (
    <>
      {parts.map((part, index) => (
        <span key={index}>
          {part}
          {index < parts.length - 1 && <wbr />}
        </span>
      ))}
    </>
  );
}

export function Badge(props: { tone: 'good' | 'warn' | 'bad' | 'neutral' | 'info'; children: ComponentChildren }) {
  return <span class={`badge badge-${props.tone}`}>{props.children}</span>;
}

/** A time shown relative ("3 hours ago") with the exact time on hover and for screen readers. */
export function RelativeTime(props: { iso: string | null; never?: string }) {
  if (props.iso === null) return <span class="muted">{props.never ?? 'never'}</span>;
  return (
    <time dateTime={props.iso} title={formatTime(props.iso)}>
      {formatRelative(props.iso)}
    </time>
  );
}

/**
 * A modal dialog on the native <dialog> element: focus moves into it, Escape closes it, the page behind is inert,
 * and focus returns where it was when it closes.
 */
export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** Escape and the close button are disabled (e.g. while a one-time secret is on screen and unconfirmed). */
  locked?: boolean;
}) {
  const reference = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = reference.current;
    const previous = document.activeElement as HTMLElement | null;
    if (dialog && !dialog.open) {
      dialog.showModal();
      // showModal focuses the first focusable element, the close button; the first field is where the user starts.
      const first = dialog.querySelector<HTMLElement>(
        '.dialog-body :is(input:not([type=hidden]), select, textarea):not([disabled]), .dialog-body :is(button, a[href]):not([disabled])',
      );
      first?.focus();
    }
    return () => {
      dialog?.close();
      previous?.focus?.();
    };
  }, []);
  return (
    <dialog
      ref={reference}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (!props.locked) props.onClose();
      }}
    >
      <div class="dialog-header">
        <h2 id={titleId}>{props.title}</h2>
        {!props.locked && (
          <button type="button" class="icon-button" aria-label="Close" onClick={props.onClose}>
            ×
          </button>
        )}
      </div>
      <div class="dialog-body">{props.children}</div>
    </dialog>
  );
}

/**
 * A secret shown exactly once (a new API key, a management token, an invitation link): selectable text, a copy
 * button, and a warning. The value lives only in this component's props; closing the dialog drops it.
 */
export function OneTimeSecret(props: { label: string; value: string; warning: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | undefined>();
  const input = useRef<HTMLTextAreaElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
      setCopied('yes');
    } catch {
      // No clipboard permission (e.g. a plain-http origin): select the text so Ctrl+C works.
      input.current?.select();
      setCopied('failed');
    }
  };
  return (
    <div class="one-time-secret">
      <p class="warning" role="note">
        <strong>Copy it now.</strong> {props.warning}
      </p>
      <label class="field">
        <span>{props.label}</span>
        <div class="secret-row">
          <textarea
            ref={input}
            class="secret-value"
            readOnly
            rows={2}
            value={props.value}
            spellcheck={false}
            autoComplete="off"
            data-testid="one-time-secret"
            onFocus={(event) => event.currentTarget.select()}
          />
          <button type="button" class="button primary" onClick={copy}>
            Copy
          </button>
        </div>
      </label>
      <p class="copy-status" aria-live="polite">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'Selected: press Ctrl+C (⌘C) to copy.'
            : ''}
      </p>
    </div>
  );
}

/** A dialog around a OneTimeSecret: locked until the user says, with `doneLabel`, that they have stored the secret. */
export function OneTimeSecretDialog(props: {
  title: string;
  label: string;
  value: string;
  warning: string;
  doneLabel: string;
  onClose: () => void;
  /** What follows the secret (code samples, what happens to an old key). */
  children?: ComponentChildren;
}) {
  return (
    <Dialog title={props.title} onClose={props.onClose} locked>
      <OneTimeSecret label={props.label} value={props.value} warning={props.warning} />
      {props.children}
      <div class="dialog-actions">
        <button type="button" class="button primary" onClick={props.onClose}>
          {props.doneLabel}
        </button>
      </div>
    </Dialog>
  );
}

/** Confirmation for destructive actions: names what will happen, and does it only on an explicit click. */
export function ConfirmDialog(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const { busy, error, run } = useAction();
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      {props.children}
      <ErrorMessage error={error} />
      <div class="dialog-actions">
        <button type="button" class="button" onClick={props.onClose}>
          Cancel
        </button>
        <button
          type="button"
          class="button danger"
          disabled={busy}
          onClick={async () => {
            await run(async () => {
              await props.onConfirm();
            });
          }}
        >
          {props.confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}

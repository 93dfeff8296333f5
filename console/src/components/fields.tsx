import type { ComponentChildren, InputHTMLAttributes } from 'preact';

/** Omit for each member of a union (preact types an input's attributes as one union member per input type). */
type OmitEach<Union, Key extends PropertyKey> = Union extends unknown ? Omit<Union, Key> : never;

/**
 * A labelled text input whose value lives in the page's state: `onValue` gets every edit. The input's attributes
 * (type, required, autoComplete, minLength…) pass through; `children` follow the input (a hint, a datalist).
 */
export function TextField(
  props: OmitEach<InputHTMLAttributes<HTMLInputElement>, 'label' | 'value' | 'onInput' | 'children'> & {
    label: ComponentChildren;
    value: string;
    onValue: (value: string) => void;
    children?: ComponentChildren;
  },
) {
  const { label, value, onValue, children, ...input } = props;
  return (
    <label class="field">
      <span>{label}</span>
      <input {...input} value={value} onInput={(event) => onValue(event.currentTarget.value)} />
      {children}
    </label>
  );
}

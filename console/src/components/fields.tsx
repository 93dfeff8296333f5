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

/**
 * A labelled select whose value lives in the page's state: `onValue` gets every choice. `children` are its options;
 * `hint` is a line below it.
 */
export function SelectField(props: {
  label: ComponentChildren;
  value: string | number;
  onValue: (value: string) => void;
  disabled?: boolean;
  title?: string;
  hint?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <select
        value={props.value}
        disabled={props.disabled}
        title={props.title}
        onChange={(event) => props.onValue(event.currentTarget.value)}
      >
        {props.children}
      </select>
      {props.hint !== undefined && <small>{props.hint}</small>}
    </label>
  );
}

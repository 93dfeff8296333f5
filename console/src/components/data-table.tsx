import type { ComponentChildren } from 'preact';

/**
 * A table of records: it scrolls sideways inside its box rather than widening the page, and (unless `stacked` is
 * false) its rows become cards on a narrow screen, each cell labelled by its `data-label`.
 */
export function DataTable(props: {
  label: string;
  stacked?: boolean;
  class?: string;
  busy?: boolean;
  children: ComponentChildren;
}) {
  const classes = ['data-table', props.stacked === false ? '' : 'stack-narrow', props.class ?? ''].filter(Boolean);
  return (
    <div class="table-wrap">
      <table class={classes.join(' ')} aria-label={props.label} aria-busy={props.busy}>
        {props.children}
      </table>
    </div>
  );
}

/** The header of a column of row buttons: no visible title, one for screen readers. */
export function ActionsHeader() {
  return (
    <th scope="col">
      <span class="visually-hidden">Actions</span>
    </th>
  );
}

/** A button in a row's actions cell: short visible text, and an accessible name (`label`) that says which row. */
export function RowButton(props: {
  label: string;
  danger?: boolean;
  onClick: () => void;
  children: ComponentChildren;
}) {
  return (
    <button
      type="button"
      class={props.danger ? 'button small danger-outline' : 'button small'}
      aria-label={props.label}
      onClick={props.onClick}
    >
      {props.children}
    </button>
  );
}

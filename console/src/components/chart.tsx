import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { formatBucket, formatDay, formatHour } from '../format.js';

/**
 * Time-series charts drawn as SVG by hand (no chart library): stacked bars for counts and costs, lines for
 * percentiles. The SVG is drawn at the width it is shown at (measured), so axis text is real 12 px on a phone as on a
 * desktop rather than a scaled-down drawing. Pointing at (or tapping, or arrowing to) a bucket shows a tooltip with
 * every series' value there. Each chart has a text alternative, and a data table with the exact numbers sits beside
 * it for keyboard and screen-reader users, and for anyone checking them against the request log.
 */

export interface ChartSeries {
  name: string;
  values: Array<number | null>;
  /** Fixed colour for series with a meaning (errors are red everywhere); otherwise taken from the palette. */
  color?: string;
}

export const meaningColors = { success: '#2f5bd3', error: '#c8413b', cancelled: '#8a93a3' };

export const palette = ['#2f5bd3', '#e07b24', '#2a9d6f', '#c2407a', '#7d5bd6', '#8a8a2a', '#2b95b8', '#b5522b'];

const gridLines = 4;
const axisFontPx = 12;
/** Rough width of one axis character at 12 px, to size the left margin to the longest label. */
const characterWidth = 7;

/** The top of the y axis: four round steps at or above the largest value (whole steps for counts). */
export function niceMaximum(value: number, wholeNumbers: boolean): number {
  const rawStep = Math.max(value, wholeNumbers ? gridLines : 0) / gridLines;
  if (rawStep <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(rawStep));
  for (const factor of [1, 2, 2.5, 5, 10]) {
    const step = factor * magnitude;
    if (wholeNumbers && !Number.isInteger(step)) continue;
    if (step >= rawStep) return step * gridLines;
  }
  return 10 * magnitude * gridLines;
}

/** The width an element is laid out at, kept current as the window or its container changes. */
function useWidth(fallback: number) {
  const reference = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = reference.current;
    if (!element) return;
    const measure = () => setWidth(Math.max(200, Math.floor(element.clientWidth)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return { reference, width };
}

export function TimeChart(props: {
  title: string;
  starts: string[];
  bucket: 'hour' | 'day';
  series: ChartSeries[];
  kind: 'bar' | 'line';
  format: (value: number) => string;
  /** The axis's labels, when they can be shorter than the values in the tooltip and the table (dollars). */
  formatAxis?: (value: number) => string;
  /** Bars only: whether values are whole numbers (counts) or not (dollars). Default: counts. */
  fractional?: boolean;
  /** Controls for this chart alone (e.g. what to stack by), beside its title. */
  controls?: ComponentChildren;
}) {
  const { starts, series, kind } = props;
  const { reference, width } = useWidth(640);
  const [active, setActive] = useState<number | undefined>();
  const tooltipId = useId();
  const count = starts.length;
  const height = width < 480 ? 190 : 230;
  const stackTotals = starts.map((_, index) =>
    series.reduce((sum, entry) => sum + (kind === 'bar' ? (entry.values[index] ?? 0) : 0), 0),
  );
  const lineMaximum = Math.max(0, ...series.flatMap((entry) => entry.values.map((value) => value ?? 0)));
  const maximum = niceMaximum(
    kind === 'bar' ? Math.max(0, ...stackTotals) : lineMaximum,
    kind === 'bar' && !props.fractional,
  );
  const yLabels = [0, 0.25, 0.5, 0.75, 1].map((fraction) => (props.formatAxis ?? props.format)(maximum * fraction));
  const margin = {
    top: 10,
    right: 10,
    bottom: 26,
    left: Math.max(...yLabels.map((label) => label.length)) * characterWidth + 12,
  };
  const plotWidth = Math.max(1, width - margin.left - margin.right);
  const plotHeight = height - margin.top - margin.bottom;
  const colorOf = (index: number) => series[index]?.color ?? palette[index % palette.length];
  const x = (index: number) => margin.left + (count === 0 ? 0 : (index / count) * plotWidth);
  const y = (value: number) => margin.top + plotHeight - (value / maximum) * plotHeight;
  const slot = count === 0 ? plotWidth : plotWidth / count;
  const label = (iso: string) => (props.bucket === 'day' ? formatDay(iso) : formatHour(iso));
  // One label per ~70 px, so they never run into each other at any width.
  const tickEvery = Math.max(1, Math.ceil(count / Math.max(1, Math.floor(plotWidth / 70))));
  const total = series.reduce(
    (sum, entry) => sum + entry.values.reduce<number>((inner, value) => inner + (value ?? 0), 0),
    0,
  );
  const summary =
    kind === 'bar'
      ? `${props.title}: ${props.format(total)} in total over ${count} ${props.bucket}s.`
      : `${props.title}: highest ${props.format(lineMaximum)} over ${count} ${props.bucket}s.`;
  const indexAt = (clientX: number, svg: SVGSVGElement) => {
    const left = svg.getBoundingClientRect().left;
    const index = Math.floor((clientX - left - margin.left) / slot);
    return index >= 0 && index < count ? index : undefined;
  };
  const activeStart = active === undefined ? undefined : starts[active];

  return (
    <figure class="chart">
      <div class="chart-header">
        <figcaption>{props.title}</figcaption>
        {props.controls}
      </div>
      <div class="chart-plot" ref={reference}>
        <svg
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-label={summary}
          aria-describedby={activeStart ? tooltipId : undefined}
          // biome-ignore lint/a11y/noNoninteractiveTabindex: arrow keys move the tooltip between buckets
          tabIndex={0}
          onPointerMove={(event) => setActive(indexAt(event.clientX, event.currentTarget))}
          onPointerDown={(event) => setActive(indexAt(event.clientX, event.currentTarget))}
          onPointerLeave={(event) => {
            if (event.pointerType === 'mouse') setActive(undefined);
          }}
          onBlur={() => setActive(undefined)}
          onKeyDown={(event) => {
            if (count === 0) return;
            if (event.key === 'ArrowRight' || event.key === 'ArrowLeft') {
              event.preventDefault();
              const step = event.key === 'ArrowRight' ? 1 : -1;
              setActive((current) =>
                current === undefined ? (step > 0 ? 0 : count - 1) : Math.min(count - 1, Math.max(0, current + step)),
              );
            } else if (event.key === 'Escape') {
              setActive(undefined);
            }
          }}
        >
          {[0, 0.25, 0.5, 0.75, 1].map((fraction, index) => (
            <g key={fraction}>
              <line
                class="grid"
                x1={margin.left}
                x2={width - margin.right}
                y1={y(maximum * fraction)}
                y2={y(maximum * fraction)}
              />
              <text
                class="axis"
                font-size={axisFontPx}
                x={margin.left - 6}
                y={y(maximum * fraction) + 4}
                text-anchor="end"
              >
                {yLabels[index]}
              </text>
            </g>
          ))}
          {starts.map((start, index) =>
            index % tickEvery === 0 ? (
              <text
                key={start}
                class="axis"
                font-size={axisFontPx}
                x={x(index) + slot / 2}
                y={height - 8}
                text-anchor="middle"
              >
                {label(start)}
              </text>
            ) : null,
          )}
          {active !== undefined && (
            <rect class="active-bucket" x={x(active)} width={slot} y={margin.top} height={plotHeight} />
          )}
          {kind === 'bar' &&
            starts.map((start, index) => {
              let base = 0;
              return (
                <g key={start}>
                  {series.map((entry, seriesIndex) => {
                    const value = entry.values[index] ?? 0;
                    if (value <= 0) return null;
                    const top = y(base + value);
                    const bar = (
                      <rect
                        key={entry.name}
                        x={x(index) + slot * 0.12}
                        width={Math.max(1, slot * 0.76)}
                        y={top}
                        height={Math.max(0.5, y(base) - top)}
                        fill={colorOf(seriesIndex)}
                      />
                    );
                    base += value;
                    return bar;
                  })}
                </g>
              );
            })}
          {kind === 'line' &&
            series.map((entry, seriesIndex) => {
              let path = '';
              let penDown = false;
              entry.values.forEach((value, index) => {
                if (value === null) {
                  penDown = false;
                  return;
                }
                path += `${penDown ? 'L' : 'M'}${(x(index) + slot / 2).toFixed(1)},${y(value).toFixed(1)}`;
                penDown = true;
              });
              const color = colorOf(seriesIndex);
              return (
                <g key={entry.name}>
                  <path d={path} fill="none" stroke={color} stroke-width="2" />
                  {entry.values.map((value, index) =>
                    value === null ? null : (
                      <circle key={index} cx={x(index) + slot / 2} cy={y(value)} r="2.5" fill={color} />
                    ),
                  )}
                </g>
              );
            })}
        </svg>
        {active !== undefined && activeStart !== undefined && (
          <ChartTooltip
            id={tooltipId}
            heading={formatBucket(activeStart, props.bucket)}
            rows={series.map((entry, index) => ({
              name: entry.name,
              color: colorOf(index) ?? '',
              value: entry.values[active] ?? null,
            }))}
            total={kind === 'bar' && series.length > 1 ? (stackTotals[active] ?? 0) : undefined}
            format={props.format}
            anchorX={x(active) + slot / 2}
            width={width}
          />
        )}
      </div>
      {series.length > 1 && (
        <ul class="legend">
          {series.map((entry, index) => (
            <li key={entry.name}>
              <span class="swatch" style={{ background: colorOf(index) }} aria-hidden="true" />
              {entry.name}
            </li>
          ))}
        </ul>
      )}
      <details class="chart-data">
        <summary>Data table</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{props.bucket === 'day' ? 'Day' : 'Hour'}</th>
                {series.map((entry) => (
                  <th scope="col" key={entry.name} class="number">
                    {entry.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {starts.map((start, index) => (
                <tr key={start}>
                  <th scope="row" class="nowrap">
                    {formatBucket(start, props.bucket)}
                  </th>
                  {series.map((entry) => (
                    <td key={entry.name} class="number">
                      {entry.values[index] === null ? '–' : props.format(entry.values[index] ?? 0)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/** The values of one bucket, beside the bar or point it describes, kept inside the chart's box. */
function ChartTooltip(props: {
  id: string;
  heading: string;
  rows: Array<{ name: string; color: string; value: number | null }>;
  total: number | undefined;
  format: (value: number) => string;
  anchorX: number;
  width: number;
}) {
  const onRight = props.anchorX < props.width / 2;
  const style = onRight
    ? { left: `${Math.round(props.anchorX + 12)}px` }
    : { right: `${Math.round(props.width - props.anchorX + 12)}px` };
  // A stack's empty parts are left out, and long breakdowns show their largest entries; the data table has the rest.
  const present = props.total === undefined ? props.rows : props.rows.filter((row) => (row.value ?? 0) !== 0);
  const shown = present.length > 8 ? [...present].sort((a, b) => (b.value ?? 0) - (a.value ?? 0)) : present;
  return (
    <div class="chart-tooltip" role="tooltip" id={props.id} style={style}>
      <p class="chart-tooltip-heading">{props.heading}</p>
      <table>
        <tbody>
          {shown.slice(0, 8).map((row) => (
            <tr key={row.name}>
              <th scope="row">
                <span class="swatch" style={{ background: row.color }} aria-hidden="true" />
                {row.name}
              </th>
              <td class="number">{row.value === null ? '–' : props.format(row.value)}</td>
            </tr>
          ))}
          {shown.length > 8 && (
            <tr>
              <th scope="row" class="muted">
                {shown.length - 8} more
              </th>
              <td />
            </tr>
          )}
          {props.total !== undefined && (
            <tr class="chart-tooltip-total">
              <th scope="row">Total</th>
              <td class="number">{props.format(props.total)}</td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

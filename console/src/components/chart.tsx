import { formatDay, formatHour, formatShortTime } from '../format.js';

/**
 * Time-series charts drawn as SVG by hand (no chart library): stacked bars for counts, lines for percentiles. Each
 * chart has a text alternative, and a data table with the exact numbers sits beside it for keyboard and screen-reader
 * users, and for anyone checking them against the request log.
 */

export interface ChartSeries {
  name: string;
  values: Array<number | null>;
  /** Fixed colour for series with a meaning (errors are red everywhere); otherwise taken from the palette. */
  color?: string;
}

export const meaningColors = { success: '#2f5bd3', error: '#c8413b', cancelled: '#8a93a3' };

export const palette = ['#2f5bd3', '#e07b24', '#2a9d6f', '#c2407a', '#7d5bd6', '#8a8a2a', '#2b95b8', '#b5522b'];

const width = 720;
const height = 220;
const margin = { top: 12, right: 12, bottom: 28, left: 56 };

const gridLines = 4;

/** The top of the y axis: four round steps at or above the largest value (whole steps for counts). */
function niceMaximum(value: number, wholeNumbers: boolean): number {
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

export function TimeChart(props: {
  title: string;
  starts: string[];
  bucket: 'hour' | 'day';
  series: ChartSeries[];
  kind: 'bar' | 'line';
  format: (value: number) => string;
}) {
  const { starts, series, kind } = props;
  const count = starts.length;
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const stackTotals = starts.map((_, index) =>
    series.reduce((sum, entry) => sum + (kind === 'bar' ? (entry.values[index] ?? 0) : 0), 0),
  );
  const lineMaximum = Math.max(0, ...series.flatMap((entry) => entry.values.map((value) => value ?? 0)));
  const maximum = niceMaximum(kind === 'bar' ? Math.max(0, ...stackTotals) : lineMaximum, kind === 'bar');
  const colorOf = (index: number) => series[index]?.color ?? palette[index % palette.length];
  const x = (index: number) => margin.left + (count === 0 ? 0 : (index / count) * plotWidth);
  const y = (value: number) => margin.top + plotHeight - (value / maximum) * plotHeight;
  const slot = count === 0 ? plotWidth : plotWidth / count;
  const label = (iso: string) => (props.bucket === 'day' ? formatDay(iso) : formatHour(iso));
  const tickEvery = Math.max(1, Math.ceil(count / 8));
  const total = series.reduce(
    (sum, entry) => sum + entry.values.reduce<number>((inner, value) => inner + (value ?? 0), 0),
    0,
  );
  const summary =
    kind === 'bar'
      ? `${props.title}: ${props.format(total)} in total over ${count} ${props.bucket}s.`
      : `${props.title}: highest ${props.format(lineMaximum)} over ${count} ${props.bucket}s.`;

  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary}>
        {[0, 0.25, 0.5, 0.75, 1].map((fraction) => (
          <g key={fraction}>
            <line
              class="grid"
              x1={margin.left}
              x2={width - margin.right}
              y1={y(maximum * fraction)}
              y2={y(maximum * fraction)}
            />
            <text class="axis" x={margin.left - 6} y={y(maximum * fraction) + 4} text-anchor="end">
              {props.format(maximum * fraction)}
            </text>
          </g>
        ))}
        {starts.map((start, index) =>
          index % tickEvery === 0 ? (
            <text key={start} class="axis" x={x(index) + slot / 2} y={height - 8} text-anchor="middle">
              {label(start)}
            </text>
          ) : null,
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
        {starts.map((start, index) => (
          <rect
            key={`hover-${start}`}
            class="hover-target"
            x={x(index)}
            width={slot}
            y={margin.top}
            height={plotHeight}
          >
            <title>
              {`${formatShortTime(start)}\n${series
                .map(
                  (entry) =>
                    `${entry.name}: ${entry.values[index] === null ? '–' : props.format(entry.values[index] ?? 0)}`,
                )
                .join('\n')}`}
            </title>
          </rect>
        ))}
      </svg>
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
                  <th scope="row">{formatShortTime(start)}</th>
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

// A time series chart on uPlot (small, canvas, no dependencies of its own). Pages load it lazily
// (`lazy(() => import('../ui/MetricChart.tsx'))`), so uPlot is fetched only by the pages that draw charts.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  points: readonly { time: number; value: number | null }[];
}

// The theme's link, accent and success colours (styles.css), light and dark.
const COLOURS = { light: ['#1d4fb8', '#b4370f', '#1e6b3a'], dark: ['#8ab4ff', '#f08a5d', '#7fd69b'] };

/** One chart of series sharing the same times (GET /v1/deployments/{id}/metrics answers them so). */
export default function MetricChart({ title, series, unit }: { title: string; series: readonly ChartSeries[]; unit?: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return undefined;
    const times = series[0]?.points.map((p) => p.time) ?? [];
    const data: uPlot.AlignedData = [times, ...series.map((s) => s.points.map((p) => p.value))];
    const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
    const axis = { stroke: dark ? '#a3acb8' : '#505a66', grid: { stroke: dark ? '#353b45' : '#e3e6ea' } };
    const chart = new uPlot({
      width: Math.max(element.clientWidth, 240),
      height: 180,
      series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLOURS[dark ? 'dark' : 'light'][i % 3], width: 2, spanGaps: false }))],
      axes: [axis, { ...axis, label: unit, size: 56 }],
      legend: { show: true },
    }, data, element);
    // Follows the card's width (a phone turned, the navigation opened).
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 240), height: 180 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [series, unit]);
  return (
    <figure className="chart" aria-label={title}>
      <figcaption><strong>{title}</strong></figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${describe(series)}`} />
    </figure>
  );
}

/** The latest value of each series, for screen readers (the canvas says nothing to them). */
function describe(series: readonly ChartSeries[]): string {
  return series.map((s) => {
    const last = [...s.points].reverse().find((p) => p.value !== null);
    return `${s.label} ${last ? round(last.value!) : 'no data'}`;
  }).join(', ');
}

const round = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toString() : n.toPrecision(3));

// prom-client's default metrics, one module each (untyped in the package): see process-metrics.ts.
declare module 'prom-client/lib/metrics/*.js' {
  import type { Registry } from 'prom-client';

  const registerMetric: (registry: Registry, config: { prefix?: string }) => void;
  export default registerMetric;
}

// The server as installed: tsc's output (dist/) bundled into a few files in dist/bundle/, which bin/switchboard.js
// runs. Why: Node keeps every loaded module's source text and module record in memory for the life of the process.
// Unbundled, serve loaded ~530 files (~5 MB of source, some of it held as two-byte strings because a comment had a
// non-ASCII character); bundled, with whitespace and comments removed and non-ASCII escaped, it is ~2.5 MB of one-byte
// text. Measured on the benchmark rig: RSS idle 121 -> 97 MB, with 1,000 open streams 169 -> 158 MB
// (docs/performance.md). Names are not mangled, so stack traces still name the functions.
import { defineConfig } from 'rolldown';

export default defineConfig({
  // The SQLite worker thread is an entry of its own: request-log/sqlite-worker.ts starts it from the file next to it.
  input: { switchboard: 'dist/cli/main.js', 'sqlite-worker-thread': 'dist/request-log/sqlite-worker-thread.js' },
  platform: 'node',
  // Native addons stay in node_modules (they are loaded from there, with their .node files); node-llama-cpp is large
  // and only loaded when a local model is configured.
  external: [/^node:/, /^better-sqlite3(\/|$)/, /^node-llama-cpp(\/|$)/, /^pg-native$/],
  output: {
    dir: 'dist/bundle',
    cleanDir: true,
    format: 'esm',
    // Dynamic imports (the cluster primary, ioredis, pg) become their own files, loaded only when used.
    chunkFileNames: '[name].js',
    charset: 'ascii',
    comments: false,
    minify: { mangle: false, compress: false, codegen: { removeWhitespace: true } },
    sourcemap: true,
  },
});

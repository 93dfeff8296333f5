// The server as installed: tsc's output (dist/) bundled into a few files in dist/bundle/, which bin/switchboard.js
// runs. Why: Node keeps every loaded module's source text and module record in memory for the life of the process, and
// one bundle without whitespace or comments, non-ASCII escaped, is a fraction of the ~530 files it replaces (RSS in
// docs/performance.md, "Memory"). Names are not mangled, so stack traces still name the functions.
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

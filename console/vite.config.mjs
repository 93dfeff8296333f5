import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The web console: a Preact single-page app served by the gateway at /console from these built files.
// No CDN and no external fonts: everything it loads comes from the gateway itself (the server sends a strict CSP).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: {
    // `npx vite console` during development, next to a gateway on :8080.
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});

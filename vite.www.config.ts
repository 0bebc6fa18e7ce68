/**
 * Build of the web UI (src/www) into dist/www, served by `openvaala serve` under `/web/v1/`.
 * Preact's JSX is compiled by Vite's own transformer (oxc, automatic runtime), so no plugin is
 * needed; every asset is bundled and hashed, nothing is loaded from a CDN (the app works
 * offline once its shell is cached by the service worker).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('./src/www/', import.meta.url));

export default defineConfig({
  root,
  base: '/web/v1/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
  build: {
    outDir: fileURLToPath(new URL('./dist/www/', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 1500,
  },
  logLevel: 'warn',
});

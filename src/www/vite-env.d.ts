/** Types of what Vite gives the browser code: `import.meta.env` and CSS imports. */
interface ImportMetaEnv {
  readonly BASE_URL: string;
}
interface ImportMeta {
  readonly env: ImportMetaEnv;
}
declare module '*.css';

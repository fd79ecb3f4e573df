/** Stylesheets are bundled by esbuild (lib/web-build.ts). */
declare module '*.css';
/** The receiving guide, bundled as text (lib/web-build.ts: the `.md` loader). */
declare module '*.md' {
  const text: string;
  export default text;
}

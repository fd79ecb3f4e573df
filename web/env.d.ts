/** Stylesheets are bundled by esbuild (lib/web-build.ts). */
declare module '*.css';

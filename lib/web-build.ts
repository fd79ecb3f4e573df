/**
 * The web pages (operator console and partner portal, `web/`): one esbuild bundle per app, with Preact and the
 * API's own zod schemas, and the files a static host serves — `<app>/index.html`, `<app>/app.js`, `<app>/app.css`.
 * The local gateway serves them at `/console/` and `/portal/`; in AWS the static site stack uploads the same files
 * to S3 behind CloudFront. The response headers both send are defined here once.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, buildSync } from 'esbuild';

export const WEB_APPS = {
  console: { title: 'Pricing console', entry: 'web/console/main.tsx' },
  portal: { title: 'Partner portal', entry: 'web/portal/main.tsx' },
} as const;
export type WebApp = keyof typeof WEB_APPS;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Response headers of every page and asset: scripts, styles and API calls from the site itself only, no framing,
 * no referrer, no MIME sniffing; HSTS where it is served over HTTPS (CloudFront).
 */
export const WEB_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const indexHtml = (app: WebApp): string =>
  [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${WEB_APPS[app].title}</title>`,
    `<link rel="stylesheet" href="/${app}/app.css">`,
    `<script type="module" src="/${app}/app.js"></script>`,
    '</head>',
    '<body>',
    `<div id="app"><noscript>The ${WEB_APPS[app].title.toLowerCase()} needs JavaScript.</noscript></div>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');

const buildOptions = (outDir: string, minify: boolean): BuildOptions => ({
  absWorkingDir: ROOT,
  entryPoints: Object.fromEntries(
    (Object.keys(WEB_APPS) as WebApp[]).map((app) => [`${app}/app`, WEB_APPS[app].entry]),
  ),
  outdir: outDir,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  // The portal shows the receiving guide's own code (web/shared/receiving-guide.ts).
  loader: { '.md': 'text' },
  minify,
  legalComments: 'none',
  logLevel: 'error',
  define: { 'process.env.NODE_ENV': '"production"' },
  // Server-side checks in the schema modules import node:crypto; the pages never run them (web/shared/node-unavailable.cjs).
  alias: { 'node:crypto': './web/shared/node-unavailable.cjs' },
});

const writePages = (outDir: string): string[] =>
  (Object.keys(WEB_APPS) as WebApp[]).flatMap((app) => {
    writeFileSync(path.join(outDir, app, 'index.html'), indexHtml(app));
    return [`${app}/index.html`, `${app}/app.js`, `${app}/app.css`];
  });

const emptied = (outDir: string): void => {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
};

/** Builds both apps into `outDir` (emptied first); returns the files written, relative to it. */
export const buildWebApps = async (outDir: string, options: { minify?: boolean } = {}): Promise<string[]> => {
  emptied(outDir);
  await build(buildOptions(outDir, options.minify ?? true));
  return writePages(outDir);
};

/** The same, synchronously (CDK synthesis, which cannot wait). */
export const buildWebAppsSync = (outDir: string): string[] => {
  emptied(outDir);
  buildSync(buildOptions(outDir, true));
  return writePages(outDir);
};

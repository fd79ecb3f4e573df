import type { CliIo } from '../../bin/admin-client';

/** What a CLI run through its exported `run` saw and did, with files and HTTP answers injected. */
export interface CliWorld {
  readonly io: CliIo;
  readonly out: string[];
  readonly err: string[];
  readonly written: Map<string, string>;
  readonly requests: { url: string; init: RequestInit }[];
}

/** A CLI's world: `files` to read, `routes` answering URLs (anything else is refused), `env`. */
export const cliWorld = (
  files: Record<string, string>,
  routes: Record<string, () => Response> = {},
  env: Record<string, string> = {},
): CliWorld => {
  const out: string[] = [];
  const err: string[] = [];
  const written = new Map<string, string>();
  const requests: { url: string; init: RequestInit }[] = [];
  return {
    out,
    err,
    written,
    requests,
    io: {
      env,
      cwd: '/work',
      fetch: async (url, init) => {
        requests.push({ url, init });
        const route = routes[url];
        if (!route) throw new Error(`connect ECONNREFUSED ${url}`);
        return route();
      },
      readFile: async (file) => {
        const content = files[file];
        if (content === undefined) throw new Error(`ENOENT: no such file ${file}`);
        return content;
      },
      writeFile: async (file, content) => {
        written.set(file, content);
      },
      stdout: (text) => out.push(text),
      stderr: (text) => err.push(text),
    },
  };
};

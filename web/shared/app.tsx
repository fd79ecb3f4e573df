/**
 * What the console and the portal share: the session (the credential in this tab's sessionStorage only), hash
 * routes, the page frame (skip link, navigation, one `main`), errors announced to screen readers, and small
 * accessible building blocks. Preact renders text as text: nothing from the API is ever inserted as HTML.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { type Api, ApiError, type Credential, createApi, type TokenCredential } from './api';

const SESSION_KEY = 'pricing-session';

export const loadCredential = (kinds: readonly Credential['kind'][]): Credential | undefined => {
  try {
    const stored = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null') as Credential | null;
    return stored && kinds.includes(stored.kind) ? stored : undefined;
  } catch {
    return undefined;
  }
};
/** What identifies a credential for reloading (never shown). */
export const credentialKey = (credential: Credential | undefined): string =>
  credential === undefined ? '' : credential.kind === 'aws' ? credential.accessKeyId : credential.token;
export const saveCredential = (credential: Credential | undefined): void => {
  if (credential) sessionStorage.setItem(SESSION_KEY, JSON.stringify(credential));
  else sessionStorage.removeItem(SESSION_KEY);
};

/** The route: the hash's path segments (`#/deliveries/evt_1` → `['deliveries', 'evt_1']`). */
export const useRoute = (): string[] => {
  const read = () =>
    window.location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter(Boolean)
      .map((segment) => decodeURIComponent(segment));
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => setRoute(read());
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
};
export const go = (...segments: string[]): void => {
  window.location.hash = `#/${segments.map(encodeURIComponent).join('/')}`;
};
export const href = (...segments: string[]): string => `#/${segments.map(encodeURIComponent).join('/')}`;

/** A message for an error: the API's own words (and the fields it names), or a network failure. */
export const describeError = (error: unknown): string => {
  if (error instanceof ApiError) {
    const fields = error.problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ');
    return `${error.message}${fields ? ` (${fields})` : ''} [${error.status} ${error.code}]`;
  }
  return error instanceof Error ? error.message : String(error);
};

/**
 * Loads `load()` when its inputs change; `reload()` runs it again. An answer for inputs since replaced (or for a view
 * gone) is dropped, so a slow answer never shows under the wrong page.
 */
export const useLoad = <T,>(load: () => Promise<T>, inputs: readonly unknown[]) => {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [runs, setRuns] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => {
        if (current) setState({ data, loading: false });
      },
      (error: unknown) => {
        if (current) setState({ error: describeError(error), loading: false });
      },
    );
    return () => {
      current = false;
    };
  }, [...inputs, runs]);
  const reload = useCallback(() => setRuns((value) => value + 1), []);
  return { ...state, reload };
};

/** An error, announced as it appears. */
export const Alert = ({ message }: { readonly message?: string | undefined }) =>
  message ? (
    <p class="alert" role="alert">
      {message}
    </p>
  ) : null;

/** A success or progress message, announced politely. */
export const Notice = ({ message }: { readonly message?: string | undefined }) => (
  <p class="notice" role="status" aria-live="polite">
    {message ?? ''}
  </p>
);

export const Loading = () => <p aria-busy="true">Loading…</p>;

export const Field = (props: {
  readonly label: string;
  readonly name: string;
  readonly value: string;
  readonly onInput: (value: string) => void;
  readonly type?: string;
  readonly required?: boolean;
  readonly hint?: string;
  readonly autocomplete?: string;
}) => {
  const id = `field-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value}
        required={props.required}
        autocomplete={props.autocomplete ?? 'off'}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(event) => props.onInput((event.currentTarget as HTMLInputElement).value)}
      />
      {props.hint ? (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      ) : null}
    </div>
  );
};

export const Select = (props: {
  readonly label: string;
  readonly name: string;
  readonly value: string;
  readonly options: readonly (readonly [string, string])[];
  readonly onChange: (value: string) => void;
}) => {
  const id = `field-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        name={props.name}
        value={props.value}
        onChange={(event) => props.onChange((event.currentTarget as HTMLSelectElement).value)}
      >
        {props.options.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
};

/** A table with a caption (its accessible name); cells are text. */
export const Table = (props: {
  readonly caption: string;
  readonly headers: readonly string[];
  readonly rows: readonly (readonly ComponentChildren[])[];
  readonly empty?: string;
}) =>
  props.rows.length === 0 ? (
    <p>{props.empty ?? 'Nothing to show.'}</p>
  ) : (
    // Focusable and named, so a keyboard can scroll it on a narrow screen.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section class="table-scroll" tabIndex={0} aria-label={props.caption}>
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.headers.map((header) => (
              <th key={header} scope="col">
                {header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row, index) => (
            <tr key={index}>
              {row.map((cell, column) => (
                <td key={column}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );

/** A secret shown once, with a copy button. */
export const SecretOnce = ({ label, value }: { readonly label: string; readonly value: string }) => {
  const [copied, setCopied] = useState(false);
  return (
    <section class="secret" aria-label={label}>
      <p>
        <strong>{label}</strong> — shown once: copy it now.
      </p>
      <code data-testid="secret">{value}</code>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard?.writeText(value).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        Copy
      </button>
      <span role="status">{copied ? 'Copied.' : ''}</span>
    </section>
  );
};

/** A line chart of points (time, value) as SVG, with its figures as a table for screen readers. */
export const LineChart = (props: {
  readonly title: string;
  readonly points: readonly { readonly at: string; readonly value: number }[];
  readonly unit?: string;
}) => {
  const { points } = props;
  if (points.length === 0) return <p>No data for {props.title.toLowerCase()}.</p>;
  const width = 600;
  const height = 160;
  const values = points.map((point) => point.value);
  const min = Math.min(...values);
  const max = Math.max(...values);
  const span = max - min || 1;
  const x = (index: number) =>
    points.length === 1 ? width / 2 : (index / (points.length - 1)) * (width - 20) + 10;
  const y = (value: number) => height - 10 - ((value - min) / span) * (height - 20);
  const path = points
    .map((point, index) => `${index === 0 ? 'M' : 'L'}${x(index)},${y(point.value)}`)
    .join(' ');
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`${props.title}: ${points.length} points`}
      >
        <path d={path} fill="none" stroke="currentColor" stroke-width="2" />
        {points.map((point, index) => (
          <circle key={point.at} cx={x(index)} cy={y(point.value)} r="3" />
        ))}
      </svg>
      <figcaption>{props.title}</figcaption>
      <details>
        <summary>Figures</summary>
        <Table
          caption={props.title}
          headers={['When', `Value${props.unit ? ` (${props.unit})` : ''}`]}
          rows={points.map((point) => [point.at, String(point.value)])}
        />
      </details>
    </figure>
  );
};

/** The frame of every page: skip link, header with navigation, the page's heading and content. */
export const Frame = (props: {
  readonly product: string;
  readonly nav: readonly (readonly [string, string])[];
  readonly current: string;
  readonly title: string;
  readonly who?: string;
  readonly onSignOut?: () => void;
  readonly children: ComponentChildren;
}) => {
  useEffect(() => {
    document.title = `${props.title} · ${props.product}`;
  }, [props.title, props.product]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <p class="product">{props.product}</p>
        {props.nav.length > 0 ? (
          <nav aria-label="Sections">
            <ul>
              {props.nav.map(([target, label]) => (
                <li key={target}>
                  <a href={`#/${target}`} aria-current={props.current === target ? 'page' : undefined}>
                    {label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        {props.who ? (
          <p class="who">
            {props.who}{' '}
            <button type="button" onClick={props.onSignOut}>
              Sign out
            </button>
          </p>
        ) : null}
      </header>
      <main id="main" tabIndex={-1}>
        <h1>{props.title}</h1>
        {props.children}
      </main>
    </>
  );
};

/**
 * A sign-in form: the credential its fields make is proved by a first call (`check`), then kept in this tab only;
 * a refusal is announced in the form.
 */
export const CredentialForm = <T,>(props: {
  readonly helpId: string;
  readonly help: ComponentChildren;
  readonly credential: () => Credential;
  readonly check: (api: Api) => Promise<T>;
  /** With the check's answer, so the app need not ask again. */
  readonly onSignedIn: (credential: Credential, answer: T) => void;
  readonly children: ComponentChildren;
}) => {
  const [error, setError] = useState<string>();
  const submit = async (event: JSX.TargetedEvent<HTMLFormElement>) => {
    event.preventDefault();
    const credential = props.credential();
    try {
      const answer = await props.check(createApi(credential));
      saveCredential(credential);
      props.onSignedIn(credential, answer);
    } catch (caught) {
      setError(describeError(caught));
    }
  };
  return (
    <form onSubmit={submit} aria-describedby={props.helpId}>
      <p id={props.helpId}>{props.help}</p>
      {props.children}
      <Alert message={error} />
      <button type="submit">Sign in</button>
    </form>
  );
};

/** Sign-in with a token (an operator's locally, a partner's key). */
export const SignIn = <T,>(props: {
  readonly kind: TokenCredential['kind'];
  readonly label: string;
  readonly hint: string;
  readonly check: (api: Api) => Promise<T>;
  readonly onSignedIn: (credential: Credential, answer: T) => void;
}) => {
  const [token, setToken] = useState('');
  return (
    <CredentialForm
      helpId="signin-help"
      help={props.hint}
      credential={() => ({ kind: props.kind, token: token.trim() })}
      check={props.check}
      onSignedIn={props.onSignedIn}
    >
      <Field label={props.label} name="token" type="password" value={token} onInput={setToken} required />
    </CredentialForm>
  );
};

/**
 * An app's signed-in pages: the frame with its navigation, the page's title from it (`<section>: <id>` on an
 * item's page), and a new page for a new route, so nothing of the last one (a verdict, a secret, a late answer)
 * stays. `page` is undefined for a route the app does not have.
 */
export const Pages = (props: {
  readonly product: string;
  readonly nav: readonly (readonly [string, string])[];
  readonly route: readonly string[];
  readonly section: string;
  readonly id: string | undefined;
  readonly who: string;
  readonly onSignOut: () => void;
  readonly page: ComponentChildren | undefined;
}) => {
  const titles: Readonly<Record<string, string>> = Object.fromEntries(props.nav);
  const title = props.id
    ? `${titles[props.section] ?? props.section}: ${props.id}`
    : (titles[props.section] ?? 'Not found');
  return (
    <Frame
      product={props.product}
      nav={props.nav}
      current={props.section}
      title={title}
      who={props.who}
      onSignOut={props.onSignOut}
    >
      <div key={props.route.join('/')}>{props.page ?? <p>No such page.</p>}</div>
    </Frame>
  );
};

/** Preformatted text (an envelope, a snippet) that scrolls sideways, reachable by keyboard. */
export const Code = ({ label, text }: { readonly label: string; readonly text: string }) => (
  // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
  <section class="code" tabIndex={0} aria-label={label}>
    <pre>{text}</pre>
  </section>
);

/**
 * The tab's sign-in: its credential (sessionStorage), an API with it, who it is (`whoAmI`, read again for a new
 * credential), and signing out.
 */
export const useSignedIn = <T,>(kinds: readonly Credential['kind'][], whoAmI: (api: Api) => Promise<T>) => {
  const [credential, setCredential] = useState<Credential | undefined>(() => loadCredential(kinds));
  // What the sign-in form's own call answered: not asked again for the same credential.
  const [proved, setProved] = useState<{ readonly key: string; readonly who: T }>();
  // One client per credential, not per render.
  const api = useMemo(() => (credential ? createApi(credential) : undefined), [credential]);
  const key = credentialKey(credential);
  const who = useLoad(async () => {
    if (proved && proved.key === key) {
      setProved(undefined);
      return proved.who;
    }
    return api ? whoAmI(api) : undefined;
  }, [key]);
  /** Signed in with a credential whose `whoAmI` the form has just answered. */
  const signIn = (signedIn: Credential, answer: T) => {
    setProved({ key: credentialKey(signedIn), who: answer });
    setCredential(signedIn);
  };
  const signOut = () => {
    saveCredential(undefined);
    setCredential(undefined);
  };
  return { api, who, signIn, signOut };
};

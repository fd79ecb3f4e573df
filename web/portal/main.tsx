/**
 * The partner portal: a partner signs in with its endpoint's partner key and sees that endpoint only — its settings
 * and health, a secret rotation, test events, its deliveries with their attempts, replays and recoveries, and how to
 * verify what it receives. Every call is a `/partner/*` route: the endpoint is the key's, never one a URL names.
 */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import type * as z from 'zod';
import {
  endpointResponseSchema,
  endpointStatsResponseSchema,
  endpointWithSecretResponseSchema,
  eventHistoryResponseSchema,
  eventsPageResponseSchema,
  recoveryAcceptedResponseSchema,
  replayAcceptedResponseSchema,
  replayProgressResponseSchema,
  testEventResponseSchema,
} from '../../functions/schemas/webhooks';
import { type Api, type Credential, createApi } from '../shared/api';
import {
  Alert,
  Code,
  credentialKey,
  describeError,
  Field,
  Frame,
  go,
  href,
  LineChart,
  Loading,
  loadCredential,
  Notice,
  SecretOnce,
  Select,
  SignIn,
  saveCredential,
  Table,
  useLoad,
  useRoute,
} from '../shared/app';
import '../shared/styles.css';

type Endpoint = z.infer<typeof endpointResponseSchema>;
type Session = { readonly api: Api; readonly endpoint: Endpoint };

const EVENT_TYPES = [
  'catalog.PriceListUpdated',
  'catalog.FXRatePublished',
  'catalog.TaxRuleChanged',
  'catalog.PromoChanged',
  'payout.processed',
];
const NAV: readonly (readonly [string, string])[] = [
  ['endpoint', 'Endpoint'],
  ['deliveries', 'Deliveries'],
  ['verify', 'How to verify'],
];

const EndpointPage = ({ session }: { readonly session: Session }) => {
  const view = session.endpoint;
  const [window, setWindow] = useState('24h');
  const stats = useLoad(
    () => session.api.get('/partner/endpoint/stats', endpointStatsResponseSchema, { window }),
    [window],
  );
  const [secret, setSecret] = useState<string>();
  const [type, setType] = useState(EVENT_TYPES[0] ?? '');
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<string>();
  const run = (action: () => Promise<void>) => () => {
    setError(undefined);
    action().catch((caught: unknown) => setError(describeError(caught)));
  };
  return (
    <>
      <dl class="facts">
        <dt>Endpoint</dt>
        <dd>{view.endpoint_id}</dd>
        <dt>Where</dt>
        <dd>{view.url ?? view.destination?.type ?? ''}</dd>
        <dt>Topics</dt>
        <dd>{view.topics.join(', ') || 'all'}</dd>
        <dt>Event types</dt>
        <dd>{view.event_types?.join(', ') ?? 'all of its topics'}</dd>
        <dt>Filter</dt>
        <dd>{view.filter ? JSON.stringify(view.filter) : 'none'}</dd>
        <dt>Status</dt>
        <dd>{view.status}</dd>
      </dl>
      <h2>Health</h2>
      <Select
        label="Window"
        name="window"
        value={window}
        onChange={setWindow}
        options={[
          ['1h', 'Last hour'],
          ['24h', 'Last day'],
          ['7d', 'Last week'],
        ]}
      />
      {stats.data ? (
        <>
          <p>
            {stats.data.attempts} attempts, success rate{' '}
            {stats.data.success_rate === null ? '—' : `${(stats.data.success_rate * 100).toFixed(1)} %`},
            latency p95 {stats.data.latency_ms.p95 ?? '—'} ms.
          </p>
          <LineChart
            title="Attempts by status class"
            points={Object.entries(stats.data.by_status_class).map(([at, value]) => ({
              at,
              value: Number(value),
            }))}
          />
        </>
      ) : (
        <Alert message={stats.error} />
      )}
      <Notice message={notice} />
      <Alert message={error} />
      <h2>Signing secret</h2>
      <button
        type="button"
        onClick={run(async () => {
          const rotated = await session.api.post(
            '/partner/endpoint/rotate-secret',
            endpointWithSecretResponseSchema,
            {},
          );
          setSecret(rotated.secret);
        })}
      >
        Rotate the secret
      </button>
      {secret ? (
        <SecretOnce label="New signing secret (the old one is still sent for 24 hours)" value={secret} />
      ) : null}
      <h2>Test event</h2>
      <div class="row">
        <Select
          label="Type"
          name="type"
          value={type}
          onChange={setType}
          options={EVENT_TYPES.map((entry) => [entry, entry] as const)}
        />
        <button
          type="button"
          onClick={run(async () => {
            const sent = await session.api.post('/partner/endpoint/test', testEventResponseSchema, { type });
            setNotice(`Sent ${sent.event_id}.`);
            go('deliveries', sent.event_id);
          })}
        >
          Send a test event
        </button>
      </div>
    </>
  );
};

const ReplayProgress = ({ session, replayId }: { readonly session: Session; readonly replayId: string }) => {
  const [tick, setTick] = useState(0);
  const progress = useLoad(
    () => session.api.get(`/partner/replays/${replayId}`, replayProgressResponseSchema),
    [replayId, tick],
  );
  if (progress.data && !progress.data.done) setTimeout(() => setTick((value) => value + 1), 500);
  const figures = progress.data?.progress;
  return (
    <p role="status" aria-live="polite" data-testid="replay-progress">
      {replayId}:{' '}
      {figures
        ? `${figures.delivered} delivered, ${figures.pending + figures.retrying} in progress, ${figures.dead} dead${progress.data?.done ? ' — done' : ''}`
        : 'starting…'}
    </p>
  );
};

const Deliveries = ({ session }: { readonly session: Session }) => {
  const [status, setStatus] = useState('');
  const [selected, setSelected] = useState<string[]>([]);
  const [replayId, setReplayId] = useState<string>();
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  const [error, setError] = useState<string>();
  const list = useLoad(
    () =>
      session.api.get('/partner/deliveries', eventsPageResponseSchema, {
        status: status || undefined,
        limit: 100,
      }),
    [status],
  );
  const run = (action: () => Promise<void>) => {
    setError(undefined);
    action().catch((caught: unknown) => setError(describeError(caught)));
  };
  return (
    <>
      <Select
        label="Status"
        name="status"
        value={status}
        onChange={setStatus}
        options={['', 'delivered', 'retrying', 'dead', 'stopped', 'skipped', 'filtered', 'pending'].map(
          (entry) => [entry, entry || 'any'] as const,
        )}
      />
      <Alert message={list.error ?? error} />
      {replayId ? <ReplayProgress session={session} replayId={replayId} /> : null}
      <button
        type="button"
        disabled={selected.length === 0}
        onClick={() =>
          run(async () => {
            const accepted = await session.api.post('/partner/replay', replayAcceptedResponseSchema, {
              event_ids: selected,
            });
            setReplayId(accepted.replay_id);
            setSelected([]);
          })
        }
      >
        Replay selected ({selected.length})
      </button>
      {list.data ? (
        <Table
          caption="Your deliveries (the last 24 hours)"
          headers={['Select', 'Event', 'Type', 'When', 'Status', 'Attempts']}
          empty="No deliveries in this window."
          rows={list.data.items.map((item) => [
            <input
              key="select"
              type="checkbox"
              aria-label={`Select ${item.event_id}`}
              checked={selected.includes(item.event_id)}
              onChange={(event) =>
                setSelected((current) =>
                  (event.currentTarget as HTMLInputElement).checked
                    ? [...current, item.event_id]
                    : current.filter((id) => id !== item.event_id),
                )
              }
            />,
            <a key="event" href={href('deliveries', item.event_id)}>
              {item.event_id}
            </a>,
            item.type,
            item.ts,
            item.deliveries[0]?.status ?? '',
            String(item.deliveries[0]?.attempts ?? 0),
          ])}
        />
      ) : null}
      <form
        aria-label="Recover a window"
        onSubmit={(event) => {
          event.preventDefault();
          run(async () => {
            const accepted = await session.api.post('/partner/recover', recoveryAcceptedResponseSchema, {
              since,
              until,
            });
            setReplayId(accepted.recovery_id);
          });
        }}
      >
        <h2>Recover what you missed</h2>
        <div class="row">
          <Field
            label="Since"
            name="since"
            value={since}
            onInput={setSince}
            required
            hint="ISO 8601, e.g. 2026-11-20T00:00:00Z"
          />
          <Field label="Until" name="until" value={until} onInput={setUntil} required />
          <button type="submit">Recover</button>
        </div>
      </form>
    </>
  );
};

const Delivery = ({ session, eventId }: { readonly session: Session; readonly eventId: string }) => {
  const [tick, setTick] = useState(0);
  const shown = useLoad(
    () => session.api.get(`/partner/deliveries/${eventId}`, eventHistoryResponseSchema),
    [eventId, tick],
  );
  const [replayId, setReplayId] = useState<string>();
  const [error, setError] = useState<string>();
  if (shown.loading && !shown.data) return <Loading />;
  if (!shown.data)
    return (
      <>
        <Alert message={shown.error} />
        <button type="button" class="secondary" onClick={() => setTick((value) => value + 1)}>
          Refresh
        </button>
      </>
    );
  const delivery = shown.data.deliveries[0];
  return (
    <>
      <p>
        Status: <strong data-testid="delivery-status">{delivery?.status ?? 'none'}</strong>
      </p>
      <Alert message={error} />
      <div class="row">
        <button
          type="button"
          onClick={() =>
            session.api.post('/partner/replay', replayAcceptedResponseSchema, { event_ids: [eventId] }).then(
              (accepted) => setReplayId(accepted.replay_id),
              (caught: unknown) => setError(describeError(caught)),
            )
          }
        >
          Replay this event
        </button>
        <button type="button" class="secondary" onClick={() => setTick((value) => value + 1)}>
          Refresh
        </button>
      </div>
      {replayId ? <ReplayProgress session={session} replayId={replayId} /> : null}
      <Table
        caption="Attempts"
        headers={['#', 'At', 'Outcome', 'Status', 'Latency', 'Response']}
        rows={(delivery?.attempts ?? []).map((attempt) => [
          String(attempt.attempt),
          attempt.at,
          attempt.outcome,
          attempt.http_status !== undefined
            ? String(attempt.http_status)
            : `${attempt.error ?? ''} ${attempt.error_detail ?? ''}`,
          `${attempt.duration_ms} ms`,
          attempt.response_excerpt ?? '',
        ])}
      />
      <h2>Envelope</h2>
      <Code label="Envelope" text={JSON.stringify(shown.data.envelope, null, 2)} />
    </>
  );
};

const TS_SNIPPET = `import { verifyWebhook } from '@pricing-service/webhook-receiver';

const envelope = verifyWebhook({
  body: rawBody, method: req.method, path: req.url, headers: req.headers,
  secrets: [process.env.WEBHOOK_SECRET], now: new Date(),
});`;

const PYTHON_SNIPPET = `# verify_webhook from docs/receiving-webhooks.md, section 9 (standard library only)
envelope = verify_webhook([os.environ["WEBHOOK_SECRET"]], method, path, headers, raw_body)`;

const Verify = ({ session }: { readonly session: Session }) => {
  const view = session.endpoint;
  const scheme = view.signature_scheme ?? 'native';
  const algorithm = view.signing_algorithm ?? 'hmac-sha256';
  return (
    <>
      <p>
        Your endpoint is signed with <strong>{algorithm}</strong> in the <strong>{scheme}</strong> scheme.{' '}
        {scheme === 'standard-webhooks'
          ? 'Verify webhook-id, webhook-timestamp and webhook-signature with any standardwebhooks library.'
          : 'Verify X-Timestamp and X-Signature over the canonical string: timestamp, method, path and the SHA-256 of the body.'}{' '}
        {algorithm === 'ed25519'
          ? 'The public keys are at /webhooks/jwks.json (the key id is in X-Signature-Key-Id).'
          : 'The key is your endpoint secret (whsec_…).'}
      </p>
      <h2>TypeScript (the receiver kit)</h2>
      <Code label="TypeScript" text={TS_SNIPPET} />
      <h2>Python</h2>
      <Code label="Python" text={PYTHON_SNIPPET} />
      <h2>Test vectors</h2>
      <p>
        Published signature vectors for every scheme are in <code>docs/webhook-signature-vectors.json</code>{' '}
        of the service's repository, with the full guide in <code>docs/receiving-webhooks.md</code>.
      </p>
    </>
  );
};

const TITLES: Readonly<Record<string, string>> = Object.fromEntries(NAV);

const Portal = () => {
  const route = useRoute();
  const [credential, setCredential] = useState<Credential | undefined>(() => loadCredential(['partner']));
  const api = credential ? createApi(credential) : undefined;
  const endpoint = useLoad(
    async () => (api ? api.get('/partner/endpoint', endpointResponseSchema) : undefined),
    [credentialKey(credential)],
  );
  const signOut = () => {
    saveCredential(undefined);
    setCredential(undefined);
  };
  if (!api || endpoint.error) {
    return (
      <Frame product="Partner portal" nav={[]} current="" title="Sign in">
        {endpoint.error ? <Alert message={endpoint.error} /> : null}
        <SignIn
          kind="partner"
          label="Partner key"
          hint="The partner key issued with your endpoint (pk_…); it is kept in this tab only."
          check={(candidate) => candidate.get('/partner/endpoint', endpointResponseSchema)}
          onSignedIn={setCredential}
        />
      </Frame>
    );
  }
  if (!endpoint.data) return <Loading />;
  const session: Session = { api, endpoint: endpoint.data };
  const [section = 'endpoint', id] = route;
  const title = id ? `${TITLES[section] ?? section}: ${id}` : (TITLES[section] ?? 'Not found');
  const page = (() => {
    switch (section) {
      case 'endpoint':
        return <EndpointPage session={session} />;
      case 'deliveries':
        return id ? <Delivery session={session} eventId={id} /> : <Deliveries session={session} />;
      case 'verify':
        return <Verify session={session} />;
      default:
        return <p>No such page.</p>;
    }
  })();
  return (
    <Frame
      product="Partner portal"
      nav={NAV}
      current={section}
      title={title}
      who={endpoint.data.endpoint_id}
      onSignOut={signOut}
    >
      {page}
    </Frame>
  );
};

const root = document.getElementById('app');
if (root) render(<Portal />, root);

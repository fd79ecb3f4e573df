/**
 * The partner portal: a partner signs in with its endpoint's partner key and sees that endpoint only — its settings
 * and health, a secret rotation, test events, its deliveries with their attempts, replays and recoveries, and how to
 * verify what it receives. Every call is a `/partner/*` route: the endpoint is the key's, never one a URL names.
 */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import type * as z from 'zod';
import GUIDE from '../../docs/receiving-webhooks.md';
import SIGNATURE_VECTORS from '../../docs/webhook-signature-vectors.json';
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
import type { Api } from '../shared/api';
import {
  Alert,
  Code,
  describeError,
  Field,
  Frame,
  go,
  href,
  Loading,
  Pages,
  Select,
  SignIn,
  useLoad,
  useRoute,
  useSignedIn,
} from '../shared/app';
import {
  EventHistory,
  Health,
  ReplayProgress,
  SecretRotation,
  SelectableEvents,
  segment,
  statusOptions,
  TestEvent,
  whereOf,
} from '../shared/deliveries';
import { guideSnippet } from '../shared/receiving-guide';
import '../shared/styles.css';

type Endpoint = z.infer<typeof endpointResponseSchema>;
type Session = { readonly api: Api; readonly endpoint: Endpoint };

const NAV: readonly (readonly [string, string])[] = [
  ['endpoint', 'Endpoint'],
  ['deliveries', 'Deliveries'],
  ['verify', 'How to verify'],
];

const EndpointPage = ({ session }: { readonly session: Session }) => {
  const view = session.endpoint;
  return (
    <>
      <dl class="facts">
        <dt>Endpoint</dt>
        <dd>{view.endpoint_id}</dd>
        <dt>Where</dt>
        <dd>{whereOf(view)}</dd>
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
      <Health
        load={(window) => session.api.get('/partner/endpoint/stats', endpointStatsResponseSchema, { window })}
      />
      <h2>Signing secret</h2>
      <SecretRotation
        note="New signing secret (the old one is still sent for 24 hours)"
        rotate={async () =>
          (await session.api.post('/partner/endpoint/rotate-secret', endpointWithSecretResponseSchema, {}))
            .secret
        }
      />
      <h2>Test event</h2>
      <TestEvent
        send={async (type) =>
          (await session.api.post('/partner/endpoint/test', testEventResponseSchema, { type })).event_id
        }
        sent={(eventId) => go('deliveries', eventId)}
      />
    </>
  );
};

const replayProgress = (session: Session) => (replayId: string) =>
  session.api.get(`/partner/replays/${segment(replayId)}`, replayProgressResponseSchema);

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
        options={statusOptions(['filtered'])}
      />
      <Alert message={list.error ?? error} />
      {replayId ? <ReplayProgress id={replayId} load={() => replayProgress(session)(replayId)} /> : null}
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
        <SelectableEvents
          caption="Your deliveries (the last 24 hours)"
          page={list.data}
          selected={selected}
          onSelected={setSelected}
          href={(eventId) => href('deliveries', eventId)}
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

const Delivery = ({ session, eventId }: { readonly session: Session; readonly eventId: string }) => (
  <EventHistory
    eventId={eventId}
    load={() => session.api.get(`/partner/deliveries/${segment(eventId)}`, eventHistoryResponseSchema)}
    replay={async () =>
      (await session.api.post('/partner/replay', replayAcceptedResponseSchema, { event_ids: [eventId] }))
        .replay_id
    }
    progress={replayProgress(session)}
  />
);

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
      <Code label="TypeScript" text={guideSnippet(GUIDE, 'TypeScript', 'ts')} />
      <h2>Python (standard library only)</h2>
      <Code label="Python" text={guideSnippet(GUIDE, 'Python', 'python')} />
      <h2>Test vectors</h2>
      <p>
        The published signature vectors for every scheme: check your verifier against them before your first
        delivery (the full guide is <code>docs/receiving-webhooks.md</code> in the service's repository).
      </p>
      <Code label="Signature vectors" text={JSON.stringify(SIGNATURE_VECTORS, null, 2)} />
    </>
  );
};

/** The partner's endpoint: the first call of a sign-in, and the session's endpoint. */
const whoAmI = (api: Api) => api.get('/partner/endpoint', endpointResponseSchema);

const Portal = () => {
  const route = useRoute();
  const { api, who: endpoint, signIn, signOut } = useSignedIn(['partner'], whoAmI);
  if (!api || endpoint.error) {
    return (
      <Frame product="Partner portal" nav={[]} current="" title="Sign in">
        {endpoint.error ? <Alert message={endpoint.error} /> : null}
        <SignIn
          kind="partner"
          label="Partner key"
          hint="The partner key issued with your endpoint (pk_…); it is kept in this tab only."
          check={whoAmI}
          onSignedIn={(signedIn, answer) => {
            signIn(signedIn, answer);
            // The same key again after a refusal: read the endpoint anew.
            endpoint.reload();
          }}
        />
      </Frame>
    );
  }
  if (!endpoint.data) return <Loading />;
  const session: Session = { api, endpoint: endpoint.data };
  const [section = 'endpoint', id] = route;
  const page = (() => {
    switch (section) {
      case 'endpoint':
        return <EndpointPage session={session} />;
      case 'deliveries':
        return id ? <Delivery session={session} eventId={id} /> : <Deliveries session={session} />;
      case 'verify':
        return <Verify session={session} />;
      default:
        return undefined;
    }
  })();
  return (
    <Pages
      product="Partner portal"
      nav={NAV}
      route={route}
      section={section}
      id={id}
      who={endpoint.data.endpoint_id}
      onSignOut={signOut}
      page={page}
    />
  );
};

const root = document.getElementById('app');
if (root) render(<Portal />, root);

/**
 * What the console and the portal both show of deliveries: an endpoint's health, a secret rotation, test events,
 * an event's attempts, a list of events to select and replay, and a replay's live progress. Each takes the API
 * calls it makes, so the console passes the operators' routes and the portal the partner's own.
 */
import { useEffect, useState } from 'preact/hooks';
import type * as z from 'zod';
import { DELIVERY_STATUSES } from '../../functions/domain/webhooks/envelope';
import { EVENT_TYPES } from '../../functions/schemas/event-types';
import type {
  endpointResponseSchema,
  endpointStatsResponseSchema,
  eventHistoryResponseSchema,
  eventsPageResponseSchema,
  replayProgressResponseSchema,
} from '../../functions/schemas/webhooks';
import { Alert, Code, describeError, LineChart, Loading, SecretOnce, Select, Table, useLoad } from './app';

type Stats = z.infer<typeof endpointStatsResponseSchema>;
type History = z.infer<typeof eventHistoryResponseSchema>;
type EventsPage = z.infer<typeof eventsPageResponseSchema>;
type Progress = z.infer<typeof replayProgressResponseSchema>;

/** The delivery statuses as filter options (first: any), from the domain's list, without those `hidden`. */
export const statusOptions = (hidden: readonly string[] = []): (readonly [string, string])[] => [
  ['', 'any'],
  ...DELIVERY_STATUSES.filter((status) => !hidden.includes(status)).map(
    (status) => [status, status] as const,
  ),
];

/** Every event type of the catalog (its single source), for test events. */
/** Where an endpoint's deliveries go: its URL, or its queue or event bus in the partner's account. */
export const whereOf = (endpoint: z.infer<typeof endpointResponseSchema>): string =>
  endpoint.url ??
  (endpoint.destination?.type === 'sqs'
    ? `sqs: ${endpoint.destination.queue_url}`
    : endpoint.destination
      ? `eventbridge: ${endpoint.destination.event_bus_arn}`
      : '');

export const EVENT_TYPE_NAMES: readonly string[] = EVENT_TYPES.map((definition) => definition.type);

/** One path segment of an API path (an id from the URL may hold any character). */
export const segment = (value: string): string => encodeURIComponent(value);

/** A replay's progress, read again every second until it is done (and never after the view is gone). */
export const ReplayProgress = (props: { readonly id: string; readonly load: () => Promise<Progress> }) => {
  const [tick, setTick] = useState(0);
  const progress = useLoad(props.load, [props.id, tick]);
  const done = progress.data?.done;
  useEffect(() => {
    if (done !== false) return;
    const timer = setTimeout(() => setTick((value) => value + 1), 1_000);
    return () => clearTimeout(timer);
  }, [done, progress.data]);
  const figures = progress.data?.progress;
  return (
    <p role="status" aria-live="polite" data-testid="replay-progress">
      Replay {props.id}:{' '}
      {figures
        ? `${figures.delivered} delivered, ${figures.pending + figures.retrying} in progress, ${figures.dead} dead${done ? ' — done' : ''}`
        : (progress.error ?? 'starting…')}
    </p>
  );
};

/** An endpoint's health over a window: the figures and a chart of attempts by status class. */
export const Health = (props: { readonly load: (window: string) => Promise<Stats> }) => {
  const [window, setWindow] = useState('24h');
  const stats = useLoad(() => props.load(window), [window]);
  return (
    <>
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
            latency p50 {stats.data.latency_ms.p50 ?? '—'} ms, p95 {stats.data.latency_ms.p95 ?? '—'} ms.
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
    </>
  );
};

/** Rotates the signing secret and shows the new one once. */
export const SecretRotation = (props: { readonly rotate: () => Promise<string>; readonly note?: string }) => {
  const [secret, setSecret] = useState<string>();
  const [error, setError] = useState<string>();
  return (
    <>
      <button
        type="button"
        onClick={() =>
          props.rotate().then(
            (value) => {
              setError(undefined);
              setSecret(value);
            },
            (caught: unknown) => setError(describeError(caught)),
          )
        }
      >
        Rotate the secret
      </button>
      <Alert message={error} />
      {secret ? <SecretOnce label={props.note ?? 'New signing secret'} value={secret} /> : null}
    </>
  );
};

/** Sends a signed example of a type; `sent` gets the event's id. */
export const TestEvent = (props: {
  readonly send: (type: string) => Promise<string>;
  readonly sent: (eventId: string) => void;
}) => {
  const [type, setType] = useState(EVENT_TYPE_NAMES[0] ?? '');
  const [error, setError] = useState<string>();
  return (
    <>
      <div class="row">
        <Select
          label="Type"
          name="type"
          value={type}
          onChange={setType}
          options={EVENT_TYPE_NAMES.map((entry) => [entry, entry] as const)}
        />
        <button
          type="button"
          onClick={() =>
            props.send(type).then(props.sent, (caught: unknown) => setError(describeError(caught)))
          }
        >
          Send a test event
        </button>
      </div>
      <Alert message={error} />
    </>
  );
};

/** An event's envelope and its deliveries' attempts, with a replay of it when offered. */
export const EventHistory = (props: {
  readonly eventId: string;
  readonly load: () => Promise<History>;
  /** Starts a replay of the event; absent: not offered. */
  readonly replay?: () => Promise<string>;
  readonly progress: (replayId: string) => Promise<Progress>;
}) => {
  const [tick, setTick] = useState(0);
  const shown = useLoad(props.load, [props.eventId, tick]);
  const [replayId, setReplayId] = useState<string>();
  const [error, setError] = useState<string>();
  const refresh = (
    <button type="button" class="secondary" onClick={() => setTick((value) => value + 1)}>
      Refresh
    </button>
  );
  if (shown.loading && !shown.data) return <Loading />;
  if (!shown.data)
    return (
      <>
        <Alert message={shown.error} />
        {refresh}
      </>
    );
  const replay = props.replay;
  return (
    <>
      <Alert message={error} />
      <div class="row">
        {replay ? (
          <button
            type="button"
            onClick={() => replay().then(setReplayId, (caught: unknown) => setError(describeError(caught)))}
          >
            Replay this event
          </button>
        ) : null}
        {refresh}
      </div>
      {replayId ? <ReplayProgress id={replayId} load={() => props.progress(replayId)} /> : null}
      {shown.data.deliveries.map((delivery) => (
        <section key={delivery.endpoint_id} aria-label={`Delivery to ${delivery.endpoint_id}`}>
          <h2>
            To {delivery.endpoint_id}: <span data-testid="delivery-status">{delivery.status}</span>
          </h2>
          <Table
            caption={`Attempts to ${delivery.endpoint_id}`}
            headers={['#', 'At', 'Outcome', 'Status', 'Latency', 'Response', 'Next attempt']}
            rows={delivery.attempts.map((attempt) => [
              String(attempt.attempt),
              attempt.at,
              attempt.outcome,
              attempt.http_status !== undefined
                ? String(attempt.http_status)
                : `${attempt.error ?? ''} ${attempt.error_detail ?? ''}`,
              `${attempt.duration_ms} ms`,
              attempt.response_excerpt ?? '',
              attempt.next_attempt_at ?? '',
            ])}
          />
        </section>
      ))}
      <h2>Envelope</h2>
      <Code label="Envelope" text={JSON.stringify(shown.data.envelope, null, 2)} />
    </>
  );
};

/** Events with a checkbox each (what "Replay selected" sends) and a link to each one's history. */
export const SelectableEvents = (props: {
  readonly caption: string;
  readonly page: EventsPage;
  readonly selected: readonly string[];
  readonly onSelected: (selected: string[]) => void;
  readonly href: (eventId: string) => string;
}) => (
  <Table
    caption={props.caption}
    headers={['Select', 'Event', 'Type', 'When', 'Deliveries']}
    empty="No events in this window."
    rows={props.page.items.map((item) => [
      <input
        key="select"
        type="checkbox"
        aria-label={`Select ${item.event_id}`}
        checked={props.selected.includes(item.event_id)}
        onChange={(event) =>
          props.onSelected(
            (event.currentTarget as HTMLInputElement).checked
              ? [...props.selected, item.event_id]
              : props.selected.filter((id) => id !== item.event_id),
          )
        }
      />,
      <a key="event" href={props.href(item.event_id)}>
        {item.event_id}
      </a>,
      item.type,
      item.ts,
      item.deliveries
        .map((delivery) => `${delivery.endpoint_id}: ${delivery.status} (${delivery.attempts} attempts)`)
        .join('; '),
    ])}
  />
);

/**
 * The operator console: change requests (four-eyes review), catalog history, deliveries (history, replay, dead
 * letters), endpoints, receipts (verified in the browser) and objectives. Every action is a call of the API the
 * OpenAPI document describes, with the operator's own token; what the operator's roles may not do is not offered.
 */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import * as z from 'zod';
import { burnRateOf } from '../../functions/definitions/objectives';
import type { CatalogDiff } from '../../functions/domain/change-control/diff';
import { catalogHistoryResponseSchema } from '../../functions/schemas/catalog-history';
import {
  changeRequestResponseSchema,
  changeRequestsPageResponseSchema,
} from '../../functions/schemas/change-requests';
import {
  jwksResponseSchema,
  operatorIdentityResponseSchema,
  priceMatrixResponseSchema,
  receiptResponseSchema,
  serviceObjectivesResponseSchema,
} from '../../functions/schemas/responses';
import {
  endpointResponseSchema,
  endpointStatsResponseSchema,
  endpointsPageResponseSchema,
  endpointWithSecretResponseSchema,
  eventHistoryResponseSchema,
  eventsPageResponseSchema,
  replayAcceptedResponseSchema,
  replayProgressResponseSchema,
  testEventResponseSchema,
} from '../../functions/schemas/webhooks';
import type { Api, Credential } from '../shared/api';
import {
  Alert,
  CredentialForm,
  describeError,
  Field,
  Frame,
  go,
  href,
  LineChart,
  Loading,
  Notice,
  Pages,
  SecretOnce,
  Select,
  SignIn,
  Table,
  useLoad,
  useRoute,
  useSignedIn,
} from '../shared/app';
import {
  EVENT_TYPE_NAMES,
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
import { verifyReceiptInBrowser } from '../shared/receipt-verify';
import '../shared/styles.css';

type Operator = z.infer<typeof operatorIdentityResponseSchema>;
type Session = { readonly api: Api; readonly me: Operator };

/** What the signed-in operator's roles allow (the roles as the API counts them: a machine's never approve). */
const can = (me: Operator, role: Operator['roles'][number]) => me.roles.includes(role);

const NAV: readonly (readonly [string, string])[] = [
  ['change-requests', 'Change requests'],
  ['catalog', 'Catalog'],
  ['deliveries', 'Deliveries'],
  ['endpoints', 'Endpoints'],
  ['receipts', 'Receipts'],
  ['objectives', 'Objectives'],
];

// ——— Change requests ———

const ChangeRequests = ({ session }: { readonly session: Session }) => {
  const [status, setStatus] = useState('pending_approval');
  const page = useLoad(
    () => session.api.get('/admin/change-requests', changeRequestsPageResponseSchema, { status, limit: 50 }),
    [status],
  );
  return (
    <>
      <Select
        label="Status"
        name="status"
        value={status}
        onChange={setStatus}
        options={[
          ['pending_approval', 'Pending approval'],
          ['published', 'Published'],
          ['rejected', 'Rejected'],
          ['stale', 'Stale'],
          ['approved', 'Approved'],
        ]}
      />
      <Alert message={page.error} />
      {page.loading && !page.data ? <Loading /> : null}
      {page.data ? (
        <Table
          caption={`Change requests: ${status.replace('_', ' ')}`}
          headers={['Request', 'Kind', 'Author', 'Created', 'Approvals', 'Changes']}
          empty="No change requests with this status."
          rows={page.data.items.map((cr) => [
            <a key="id" href={href('change-requests', cr.cr_id)}>
              {cr.cr_id}
            </a>,
            cr.kind,
            cr.author,
            cr.created_at,
            String(cr.approvals.length),
            `${cr.summary.prices_changed} prices changed, ${cr.summary.prices_added} added, ${cr.summary.fx_rates_changed} rates, ${cr.summary.tax_rates_changed} tax rates`,
          ])}
        />
      ) : null}
    </>
  );
};

const move = (percent: string | undefined) =>
  percent === undefined ? '' : `${Number(percent) > 0 ? '+' : ''}${percent} %`;

const DiffView = ({ diff }: { readonly diff: CatalogDiff }) => (
  <>
    <h2>Prices</h2>
    <Table
      caption="Price rows: old → new"
      headers={['Price list', 'SKU', 'Currency', 'Old', 'New', 'Move']}
      empty="No price changes."
      rows={[
        ...diff.prices.changed.map((row) => [
          row.pricelist_id,
          row.sku_id,
          row.currency,
          row.from ?? '',
          row.to ?? '',
          move(row.move_percent),
        ]),
        ...diff.prices.added.map((row) => [
          row.pricelist_id,
          row.sku_id,
          row.currency,
          '—',
          row.to ?? '',
          'added',
        ]),
        ...diff.prices.removed.map((row) => [
          row.pricelist_id,
          row.sku_id,
          row.currency,
          row.from ?? '',
          '—',
          'removed',
        ]),
      ]}
    />
    <h2>Exchange rates</h2>
    <Table
      caption="Rate rows: old → new"
      headers={['Pair', 'Set', 'Old', 'New', 'Move']}
      empty="No rate changes."
      rows={diff.fx_rates.map((row) => [
        row.pair,
        row.set,
        row.from ?? '—',
        row.to ?? '—',
        move(row.move_percent),
      ])}
    />
    <h2>Tax rates</h2>
    <Table
      caption="Tax rows: old → new"
      headers={['Region', 'Tax class', 'Component', 'Old', 'New']}
      empty="No tax changes."
      rows={diff.tax_rates.map((row) => [
        row.region,
        row.tax_class,
        row.component,
        row.from ?? '—',
        row.to ?? '—',
      ])}
    />
    <h2>Promotions</h2>
    <p>
      Added: {diff.promotions.added.join(', ') || 'none'}; changed:{' '}
      {diff.promotions.changed.join(', ') || 'none'}; removed: {diff.promotions.removed.join(', ') || 'none'}.
    </p>
  </>
);

const ChangeRequest = ({ session, crId }: { readonly session: Session; readonly crId: string }) => {
  const cr = useLoad(
    () => session.api.get(`/admin/change-requests/${segment(crId)}`, changeRequestResponseSchema),
    [crId],
  );
  const [comment, setComment] = useState('');
  const [acknowledged, setAcknowledged] = useState<string[]>([]);
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  if (cr.loading && !cr.data) return <Loading />;
  if (!cr.data) return <Alert message={cr.error} />;
  const request = cr.data;
  const me = session.me;
  const codes = [...new Set(request.guardrails.map((finding) => finding.code))];
  const approvedByMe = request.approvals.some((approval) => approval.by === me.identity);
  const mayReview =
    request.status === 'pending_approval' &&
    can(me, 'approver') &&
    request.author !== me.identity &&
    !approvedByMe;
  const act = async (action: 'approve' | 'reject') => {
    setError(undefined);
    try {
      const body =
        action === 'approve' ? { comment: comment || undefined, acknowledge: acknowledged } : { comment };
      const after = await session.api.post(
        `/admin/change-requests/${segment(crId)}/${action}`,
        changeRequestResponseSchema,
        body,
      );
      setNotice(
        after.status === 'published'
          ? `Published: price list ${after.publication?.versions.pricelist_version}, FX ${after.publication?.versions.fx_version}, tax ${after.publication?.versions.tax_rule_version}.`
          : action === 'approve'
            ? `Approved (${after.approvals.length} of 2): it is published when a second approver approves.`
            : 'Rejected.',
      );
      cr.reload();
    } catch (caught) {
      setError(describeError(caught));
    }
  };
  return (
    <>
      <dl class="facts">
        <dt>Status</dt>
        <dd data-testid="cr-status">{request.status}</dd>
        <dt>Kind</dt>
        <dd>{request.kind}</dd>
        <dt>Author</dt>
        <dd>{request.author}</dd>
        <dt>Note</dt>
        <dd>{request.note ?? '—'}</dd>
        <dt>Approvals</dt>
        <dd>
          {request.approvals.map((approval) => `${approval.by} (${approval.at})`).join(', ') || 'none yet'}
        </dd>
        {request.publication ? (
          <>
            <dt>Published versions</dt>
            <dd data-testid="cr-versions">
              price list {request.publication.versions.pricelist_version}, FX{' '}
              {request.publication.versions.fx_version}, tax {request.publication.versions.tax_rule_version}{' '}
              (revision {request.publication.revision})
            </dd>
            <dt>Release</dt>
            <dd>
              {`signed release${request.release ? ` (${request.release.signatures.length} signature)` : ''}, journal entry ${request.journal_index ?? '—'}`}
            </dd>
          </>
        ) : null}
        {request.rejection ? (
          <>
            <dt>Rejected</dt>
            <dd>
              by {request.rejection.by}: {request.rejection.comment}
            </dd>
          </>
        ) : null}
      </dl>
      {request.diff ? <DiffView diff={request.diff as unknown as CatalogDiff} /> : null}
      <h2>Guardrails</h2>
      {request.guardrails.length === 0 ? (
        <p>No guardrail was tripped.</p>
      ) : (
        <ul>
          {request.guardrails.map((finding) => (
            <li key={`${finding.code}${finding.path}`}>
              <strong>{finding.code}</strong> at {finding.path}: {finding.message}
            </li>
          ))}
        </ul>
      )}
      <Notice message={notice} />
      <Alert message={error} />
      {mayReview ? (
        <form onSubmit={(event) => event.preventDefault()} aria-label="Review">
          {codes.length > 0 ? (
            <fieldset>
              <legend>Acknowledge the guardrails before approving</legend>
              {codes.map((code) => (
                <label key={code}>
                  <input
                    type="checkbox"
                    checked={acknowledged.includes(code)}
                    onChange={(event) =>
                      setAcknowledged((current) =>
                        (event.currentTarget as HTMLInputElement).checked
                          ? [...current, code]
                          : current.filter((entry) => entry !== code),
                      )
                    }
                  />{' '}
                  {code}
                </label>
              ))}
            </fieldset>
          ) : null}
          <Field
            label="Comment"
            name="comment"
            value={comment}
            onInput={setComment}
            hint="Required to reject."
          />
          <div class="row">
            <button type="button" onClick={() => act('approve')}>
              Approve
            </button>
            <button type="button" class="danger" onClick={() => act('reject')}>
              Reject
            </button>
          </div>
        </form>
      ) : request.status === 'pending_approval' ? (
        <p data-testid="cannot-review">
          {request.author === me.identity
            ? 'You wrote this change: another approver must review it.'
            : approvedByMe
              ? 'You approved it: a second approver publishes it.'
              : 'Your roles do not include approving.'}
        </p>
      ) : null}
    </>
  );
};

// ——— Catalog ———

/** A SKU's price in every region and currency the catalog displays, each with its explanation (C28). */
const PriceMatrix = ({ session, sku }: { readonly session: Session; readonly sku: string }) => {
  const matrix = useLoad(
    () => session.api.get('/admin/catalog/prices', priceMatrixResponseSchema, { sku, explain: true }),
    [sku],
  );
  if (!matrix.data) return matrix.loading ? <Loading /> : <Alert message={matrix.error} />;
  return (
    <Table
      caption={`Prices of ${sku} across regions and currencies`}
      headers={['Region', 'Currency', 'Display price', 'Tax included', 'Promotions', 'How it came about']}
      rows={matrix.data.cells.map((cell) =>
        cell.price
          ? [
              cell.region,
              cell.currency,
              `${cell.price.display_price} ${cell.price.currency}`,
              cell.price.price_includes_tax ? 'yes' : 'no',
              cell.price.applied_promotions.map((promotion) => promotion.promo_id).join(', ') || '—',
              <details key="explain">
                <summary>Explain</summary>
                <ol>
                  {(cell.price.explain?.steps ?? []).map((step, index) => (
                    <li key={index}>
                      {step.step} · {step.rule}: {step.detail}
                    </li>
                  ))}
                </ol>
              </details>,
            ]
          : [cell.region, cell.currency, '—', '—', '—', cell.unavailable?.message ?? 'not available'],
      )}
    />
  );
};

/** The figure of a history entry: a price list item's base price, a rate's rate, else the value as text. */
const figureOf = (value: unknown): string => {
  if (value === null || value === undefined) return '—';
  if (typeof value !== 'object') return String(value);
  const record = value as { base_price?: unknown; rate?: unknown };
  if (record.base_price !== undefined) return String(record.base_price);
  if (record.rate !== undefined) return String(record.rate);
  return JSON.stringify(value);
};

const Catalog = ({ session }: { readonly session: Session }) => {
  const [sku, setSku] = useState('');
  const [pair, setPair] = useState('');
  const [query, setQuery] = useState<{ sku?: string; pair?: string }>();
  const history = useLoad(
    async () =>
      query
        ? session.api.get('/catalog/history', catalogHistoryResponseSchema, { ...query, limit: 50 })
        : undefined,
    [query?.sku, query?.pair],
  );
  const slo = useLoad(() => session.api.get('/admin/slo', serviceObjectivesResponseSchema), []);
  const points = (history.data?.items ?? [])
    .map((item) => ({ at: item.effective_from, value: Number(figureOf(item.value)) }))
    .filter((point) => Number.isFinite(point.value))
    .reverse();
  return (
    <>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setQuery(sku ? { sku } : pair ? { pair } : undefined);
        }}
      >
        <div class="row">
          <Field
            label="SKU"
            name="sku"
            value={sku}
            onInput={setSku}
            hint="Its price history across publications."
          />
          <Field
            label="FX pair"
            name="pair"
            value={pair}
            onInput={setPair}
            hint="e.g. USD/EUR: its rate history."
          />
          <button type="submit">Show history</button>
        </div>
      </form>
      <Alert message={history.error} />
      {history.data ? (
        <>
          <LineChart
            title={query?.sku ? `Price of ${query.sku}` : `Rate of ${query?.pair ?? ''}`}
            points={points}
          />
          <Table
            caption="Versions, newest first"
            headers={['Effective from', 'Value', 'Change', 'Price list / currency', 'Change request']}
            rows={history.data.items.map((item) => [
              item.effective_from,
              figureOf(item.value),
              item.change,
              [item.pricelist_id, item.currency, item.rate_set].filter(Boolean).join(' '),
              item.change_request ? (
                <a key="cr" href={href('change-requests', item.change_request.cr_id)}>
                  {item.change_request.cr_id}
                </a>
              ) : (
                '—'
              ),
            ])}
          />
        </>
      ) : null}
      {query?.sku ? <PriceMatrix session={session} sku={query.sku} /> : null}
      {query?.pair && history.data?.items[0] ? (
        <p data-testid="fx-staleness">
          The rate in force was published {history.data.items[0].published_at} (
          {Math.max(0, Math.round((Date.now() - Date.parse(history.data.items[0].published_at)) / 60_000))}{' '}
          minutes ago), effective from {history.data.items[0].effective_from}.
        </p>
      ) : null}
      <h2>FX breakers</h2>
      {slo.data ? (
        <p>
          {slo.data.open_breakers.length === 0
            ? 'Every FX breaker is closed.'
            : `Open: ${slo.data.open_breakers.map((breaker) => `${breaker.pair} since ${breaker.opened_at}`).join(', ')}`}
        </p>
      ) : (
        <Alert message={slo.error} />
      )}
    </>
  );
};

// ——— Deliveries ———

const replayProgress = (session: Session) => (replayId: string) =>
  session.api.get(`/webhooks/replays/${segment(replayId)}`, replayProgressResponseSchema);

const Deliveries = ({ session }: { readonly session: Session }) => {
  const [filters, setFilters] = useState({ status: '', endpoint_id: '', from: '', to: '', type: '' });
  const [applied, setApplied] = useState(filters);
  const [selected, setSelected] = useState<string[]>([]);
  const [replayId, setReplayId] = useState<string>();
  const [error, setError] = useState<string>();
  const events = useLoad(
    () =>
      session.api.get('/webhooks/events', eventsPageResponseSchema, {
        status: applied.status || undefined,
        endpoint_id: applied.endpoint_id || undefined,
        from: applied.from || undefined,
        to: applied.to || undefined,
        limit: 100,
      }),
    [applied.status, applied.endpoint_id, applied.from, applied.to],
  );
  // What the view shows is what a replay restarts: its endpoint and status filters go with it.
  const scope = {
    ...(applied.endpoint_id ? { endpoint_id: applied.endpoint_id } : {}),
    ...(applied.status ? { status: applied.status } : {}),
  };
  const replay = async (body: Record<string, unknown>) => {
    setError(undefined);
    try {
      const accepted = await session.api.post('/webhooks/replay', replayAcceptedResponseSchema, {
        ...body,
        ...scope,
      });
      setReplayId(accepted.replay_id);
      setSelected([]);
    } catch (caught) {
      setError(describeError(caught));
    }
  };
  const set = (name: keyof typeof filters) => (value: string) =>
    setFilters((current) => ({ ...current, [name]: value }));
  return (
    <>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setApplied(filters);
        }}
      >
        <div class="row">
          <Select
            label="Status"
            name="status"
            value={filters.status}
            onChange={set('status')}
            options={statusOptions()}
          />
          <Select
            label="Type"
            name="type"
            value={filters.type}
            onChange={set('type')}
            options={[['', 'any'], ...EVENT_TYPE_NAMES.map((type) => [type, type] as const)]}
          />
          <Field
            label="Endpoint"
            name="endpoint_id"
            value={filters.endpoint_id}
            onInput={set('endpoint_id')}
          />
          <Field
            label="From"
            name="from"
            value={filters.from}
            onInput={set('from')}
            hint="ISO 8601; default: a day ago"
          />
          <Field label="To" name="to" value={filters.to} onInput={set('to')} />
        </div>
        <div class="row">
          <button type="submit">Filter</button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              const dead = { ...filters, status: 'dead' };
              setFilters(dead);
              setApplied(dead);
            }}
          >
            Dead letters
          </button>
        </div>
      </form>
      <Alert message={events.error ?? error} />
      {replayId ? <ReplayProgress id={replayId} load={() => replayProgress(session)(replayId)} /> : null}
      {can(session.me, 'endpoint_admin') ? (
        <div class="row">
          <button
            type="button"
            disabled={selected.length === 0}
            onClick={() => replay({ event_ids: selected })}
          >
            Replay selected ({selected.length})
          </button>
          {applied.from && applied.to ? (
            <button
              type="button"
              class="secondary"
              onClick={() => replay({ from: applied.from, to: applied.to })}
            >
              Replay the window
            </button>
          ) : null}
        </div>
      ) : null}
      {events.data ? (
        <SelectableEvents
          caption="Events and their deliveries"
          page={{
            ...events.data,
            // The type is picked among the events of the window shown (the listing has no type parameter).
            items: events.data.items.filter((item) => !applied.type || item.type === applied.type),
          }}
          selected={selected}
          onSelected={setSelected}
          href={(eventId) => href('deliveries', eventId)}
        />
      ) : null}
    </>
  );
};

const EventDetail = ({ session, eventId }: { readonly session: Session; readonly eventId: string }) => (
  <EventHistory
    eventId={eventId}
    load={() => session.api.get(`/webhooks/events/${segment(eventId)}`, eventHistoryResponseSchema)}
    {...(can(session.me, 'endpoint_admin')
      ? {
          replay: async () =>
            (
              await session.api.post('/webhooks/replay', replayAcceptedResponseSchema, {
                event_ids: [eventId],
              })
            ).replay_id,
        }
      : {})}
    progress={replayProgress(session)}
  />
);

// ——— Endpoints ———

const Endpoints = ({ session }: { readonly session: Session }) => {
  const list = useLoad(
    () => session.api.get('/webhooks/endpoints', endpointsPageResponseSchema, { limit: 100 }),
    [],
  );
  const [url, setUrl] = useState('');
  const [topics, setTopics] = useState('catalog');
  const [created, setCreated] = useState<z.infer<typeof endpointWithSecretResponseSchema>>();
  const [error, setError] = useState<string>();
  const register = async () => {
    setError(undefined);
    try {
      const endpoint = await session.api.post('/webhooks/endpoints', endpointWithSecretResponseSchema, {
        url,
        topics: topics
          .split(',')
          .map((topic) => topic.trim())
          .filter(Boolean),
      });
      setCreated(endpoint);
      list.reload();
    } catch (caught) {
      setError(describeError(caught));
    }
  };
  return (
    <>
      {can(session.me, 'endpoint_admin') ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void register();
          }}
          aria-label="Register an endpoint"
        >
          <h2>Register an endpoint</h2>
          <Field
            label="URL"
            name="url"
            value={url}
            onInput={setUrl}
            required
            hint="Deliveries go to <url>/<topic>."
          />
          <Field
            label="Topics"
            name="topics"
            value={topics}
            onInput={setTopics}
            hint="Comma-separated: catalog, payout, operations."
          />
          <Alert message={error} />
          <button type="submit">Register</button>
        </form>
      ) : null}
      {created ? (
        <div class="panel">
          <p>
            Registered <a href={href('endpoints', created.endpoint_id)}>{created.endpoint_id}</a>.
          </p>
          <SecretOnce label="Signing secret" value={created.secret} />
          {created.partner_key ? (
            <SecretOnce label="Partner key (portal sign-in)" value={created.partner_key} />
          ) : null}
        </div>
      ) : null}
      <Alert message={list.error} />
      {list.data ? (
        <Table
          caption="Endpoints"
          headers={['Endpoint', 'Where', 'Topics', 'Status']}
          rows={list.data.items.map((endpoint) => [
            <a key="id" href={href('endpoints', endpoint.endpoint_id)}>
              {endpoint.endpoint_id}
            </a>,
            whereOf(endpoint),
            endpoint.topics.join(', ') || 'all',
            endpoint.status,
          ])}
        />
      ) : null}
    </>
  );
};

/** Edits an endpoint: each field as the API takes it (`PATCH`); empty removes a restriction. */
const EndpointSettings = (props: {
  readonly session: Session;
  readonly path: string;
  readonly view: z.infer<typeof endpointResponseSchema>;
  readonly saved: () => void;
}) => {
  const { view } = props;
  const [form, setForm] = useState({
    url: view.url ?? '',
    topics: view.topics.join(', '),
    event_types: view.event_types?.join(', ') ?? '',
    filter: view.filter ? JSON.stringify(view.filter) : '',
    per_second: view.rate_limit?.per_second?.toString() ?? '',
    max_in_flight: view.rate_limit?.max_in_flight?.toString() ?? '',
    ordering: view.ordering?.key ?? '',
  });
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const set = (name: keyof typeof form) => (value: string) =>
    setForm((current) => ({ ...current, [name]: value }));
  const list = (text: string) =>
    text
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
  const save = async () => {
    setError(undefined);
    setNotice(undefined);
    let filter: unknown = null;
    try {
      filter = form.filter.trim() ? JSON.parse(form.filter) : null;
    } catch {
      setError('The filter is not JSON.');
      return;
    }
    const limits = {
      ...(form.per_second ? { per_second: Number(form.per_second) } : {}),
      ...(form.max_in_flight ? { max_in_flight: Number(form.max_in_flight) } : {}),
    };
    try {
      await props.session.api.patch(props.path, endpointResponseSchema, {
        ...(view.url !== undefined && form.url !== view.url ? { url: form.url } : {}),
        topics: list(form.topics),
        event_types: list(form.event_types).length > 0 ? list(form.event_types) : null,
        filter,
        rate_limit: Object.keys(limits).length > 0 ? limits : null,
        ordering: form.ordering ? { key: form.ordering } : null,
      });
      setNotice('Saved.');
      props.saved();
    } catch (caught) {
      setError(describeError(caught));
    }
  };
  return (
    <form
      aria-label="Endpoint settings"
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <h2>Settings</h2>
      {view.url !== undefined ? <Field label="URL" name="url" value={form.url} onInput={set('url')} /> : null}
      {(
        [
          ['Topics', 'topics', 'Comma-separated.'],
          ['Event types', 'event_types', 'Comma-separated; empty: every type of its topics.'],
          [
            'Filter',
            'filter',
            'JSON over type, tenant, producer and data, e.g. {"data.amount":{"$gte":"100"}}; empty: none.',
          ],
        ] as const
      ).map(([label, name, hint]) => (
        <Field key={name} label={label} name={name} value={form[name]} onInput={set(name)} hint={hint} />
      ))}
      <div class="row">
        <Field
          label="Deliveries per second"
          name="per_second"
          value={form.per_second}
          onInput={set('per_second')}
        />
        <Field
          label="At most in flight"
          name="max_in_flight"
          value={form.max_in_flight}
          onInput={set('max_in_flight')}
        />
      </div>
      <Field
        label="Ordering key"
        name="ordering"
        value={form.ordering}
        onInput={set('ordering')}
        hint="endpoint, tenant or data.<field>; empty: unordered."
      />
      <Alert message={error} />
      <Notice message={notice} />
      <button type="submit">Save</button>
    </form>
  );
};

const EndpointDetail = ({
  session,
  endpointId,
}: {
  readonly session: Session;
  readonly endpointId: string;
}) => {
  const path = `/webhooks/endpoints/${segment(endpointId)}`;
  const endpoint = useLoad(() => session.api.get(path, endpointResponseSchema), [endpointId]);
  const [error, setError] = useState<string>();
  const admin = can(session.me, 'endpoint_admin');
  if (endpoint.loading && !endpoint.data) return <Loading />;
  if (!endpoint.data) return <Alert message={endpoint.error} />;
  const view = endpoint.data;
  const where = whereOf(view);
  return (
    <>
      <dl class="facts">
        <dt>Where</dt>
        <dd>{where}</dd>
        <dt>Topics</dt>
        <dd>{view.topics.join(', ') || 'all'}</dd>
        <dt>Status</dt>
        <dd>
          {view.status}
          {view.disabled_reason ? ` (${view.disabled_reason})` : ''}
        </dd>
        <dt>Signing</dt>
        <dd>
          {view.signature_scheme ?? 'native'}, {view.signing_algorithm ?? 'hmac-sha256'}
        </dd>
        <dt>Limits</dt>
        <dd>
          {view.rate_limit
            ? `${view.rate_limit.per_second ?? '∞'}/s, ${view.rate_limit.max_in_flight ?? '∞'} in flight`
            : 'none'}
        </dd>
        <dt>Ordering</dt>
        <dd>{view.ordering?.key ?? 'none'}</dd>
        <dt>Filter</dt>
        <dd>{view.filter ? JSON.stringify(view.filter) : 'none'}</dd>
      </dl>
      <h2>Health</h2>
      <Health load={(window) => session.api.get(`${path}/stats`, endpointStatsResponseSchema, { window })} />
      {admin ? <EndpointSettings session={session} path={path} view={view} saved={endpoint.reload} /> : null}
      {admin ? (
        <>
          <h2>Secret</h2>
          <SecretRotation
            rotate={async () =>
              (await session.api.post(`${path}/rotate-secret`, endpointWithSecretResponseSchema, {})).secret
            }
          />
          <h2>Test event</h2>
          <TestEvent
            send={async (type) =>
              (await session.api.post(`${path}/test`, testEventResponseSchema, { type })).event_id
            }
            sent={(eventId) => go('deliveries', eventId)}
          />
          <h2>Status</h2>
          <Alert message={error} />
          <button
            type="button"
            class="secondary"
            onClick={() =>
              session.api
                .patch(path, endpointResponseSchema, {
                  status: view.status === 'enabled' ? 'disabled' : 'enabled',
                })
                .then(endpoint.reload, (caught: unknown) => setError(describeError(caught)))
            }
          >
            {view.status === 'enabled' ? 'Disable' : 'Enable'}
          </button>
        </>
      ) : null}
    </>
  );
};

// ——— Receipts ———

const Receipts = ({
  session,
  receiptId,
}: {
  readonly session: Session;
  readonly receiptId?: string | undefined;
}) => {
  const [id, setId] = useState(receiptId ?? '');
  const receipt = useLoad(
    async () =>
      receiptId
        ? (session.api.raw(`/admin/receipts/${segment(receiptId)}`) as Promise<Record<string, unknown>>)
        : undefined,
    [receiptId],
  );
  const [verdict, setVerdict] = useState<string>();
  const [valid, setValid] = useState<boolean>();
  const verify = async () => {
    const data = receipt.data;
    if (!data) return;
    try {
      const keys = await session.api.get('/keys', jwksResponseSchema);
      const result = await verifyReceiptInBrowser(data, keys.keys);
      setValid(result.valid);
      setVerdict(
        result.valid ? `Signature valid (key ${result.kid}).` : `Signature invalid: ${result.reason}.`,
      );
    } catch (caught) {
      setValid(false);
      setVerdict(`Could not verify: ${describeError(caught)}`);
    }
  };

  // Read through the API's schema for display (a copy): the raw answer is what is verified, untouched.
  const parsed = receipt.data ? receiptResponseSchema.safeParse(receipt.data) : undefined;
  const totals = parsed?.success ? parsed.data.computed_totals : undefined;
  const refunds = ((receipt.data?.refunds ?? []) as readonly Record<string, unknown>[]).map((refund) => ({
    id: String(refund.refund_id ?? ''),
    kind: String(refund.kind ?? ''),
    total: String((refund.computed_totals as { total?: unknown } | undefined)?.total ?? refund.amount ?? ''),
    at: String(refund.created_at ?? refund.issued_at ?? ''),
  }));
  return (
    <>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          go('receipts', id.trim());
        }}
      >
        <div class="row">
          <Field label="Receipt id" name="receipt_id" value={id} onInput={setId} required />
          <button type="submit">Look up</button>
        </div>
      </form>
      <Alert message={receipt.error} />
      {receipt.data ? (
        <>
          <dl class="facts">
            <dt>Receipt</dt>
            <dd>{String(receipt.data.receipt_id)}</dd>
            <dt>Issued</dt>
            <dd>{String(receipt.data.issued_at)}</dd>
            <dt>Status</dt>
            <dd>{String(receipt.data.status)}</dd>
            <dt>Versions</dt>
            <dd>
              price list {String(receipt.data.pricelist_version)}, FX {String(receipt.data.fx_version)}, tax{' '}
              {String(receipt.data.tax_rule_version)}
            </dd>
          </dl>
          {totals ? (
            <Table
              caption="Breakdown"
              headers={['Subtotal', 'Discounts', 'Taxes', 'Fees', 'Total']}
              rows={[
                [
                  totals.subtotal,
                  totals.discounts,
                  totals.taxes,
                  totals.fees,
                  `${totals.total} ${totals.currency}`,
                ],
              ]}
            />
          ) : null}
          <button type="button" onClick={() => void verify()}>
            Verify the signature
          </button>
          <p
            role="status"
            aria-live="polite"
            class={valid === undefined ? '' : valid ? 'valid' : 'invalid'}
            data-testid="receipt-verdict"
          >
            {verdict ?? ''}
          </p>
          <Table
            caption="Refunds"
            headers={['Refund', 'Kind', 'Amount', 'When']}
            empty="No refunds."
            rows={refunds.map((refund) => [refund.id, refund.kind, refund.total, refund.at])}
          />
        </>
      ) : null}
    </>
  );
};

// ——— Objectives ———

/** A burn rate as the page shows it: "—" where an objective has none (latencies, counts). */
const burnText = (rate: number | undefined): string =>
  rate === undefined ? '—' : Number.isFinite(rate) ? `${rate.toFixed(2)}×` : 'budget spent';

const Objectives = ({ session }: { readonly session: Session }) => {
  const slo = useLoad(() => session.api.get('/admin/slo', serviceObjectivesResponseSchema), []);
  if (!slo.data) return slo.loading ? <Loading /> : <Alert message={slo.error} />;
  return (
    <Table
      caption={`Objectives from ${slo.data.window_start} to ${slo.data.window_end} (${slo.data.source})`}
      headers={['Objective', 'Target', 'Measured', 'Burn rate', 'Samples', 'Status']}
      rows={Object.entries(slo.data.objectives).map(([id, objective]) => [
        `${id}: ${objective.description}`,
        `${objective.comparison} ${objective.target} ${objective.unit}`,
        objective.measured === null ? '—' : String(objective.measured),
        burnText(burnRateOf(objective)),
        String(objective.samples),
        objective.status.replace('_', ' '),
      ])}
    />
  );
};

// ——— Signing in ———

/** `/console/config.json`, deployed with the site in AWS: the API the signatures name. Absent locally. */
const siteConfigSchema = z.object({
  api_origin: z.string().startsWith('https://'),
  region: z.string().min(1),
});
type SiteConfig = z.infer<typeof siteConfigSchema>;

const loadSiteConfig = async (): Promise<SiteConfig | undefined> => {
  const answer = await fetch('/console/config.json');
  if (!answer.ok) return undefined;
  const parsed = siteConfigSchema.safeParse(await answer.json().catch(() => undefined));
  return parsed.success ? parsed.data : undefined;
};

/** Who the operator is: the first call of a sign-in, and the session's identity. */
const whoAmI = (api: Api) => api.get('/admin/me', operatorIdentityResponseSchema);

/** In AWS: the temporary credentials of an operator role (C27), kept in this tab only. */
const AwsSignIn = (props: {
  readonly config: SiteConfig;
  readonly onSignedIn: (credential: Credential, me: z.infer<typeof operatorIdentityResponseSchema>) => void;
}) => {
  const [accessKeyId, setAccessKeyId] = useState('');
  const [secretAccessKey, setSecretAccessKey] = useState('');
  const [sessionToken, setSessionToken] = useState('');
  return (
    <CredentialForm
      helpId="aws-help"
      help={
        <>
          Temporary credentials of your operator role (
          <code>
            aws sts assume-role --role-arn &lt;OperatorRole…Arn&gt; --role-session-name &lt;you&gt;
            --source-identity &lt;you&gt;
          </code>
          ), kept in this tab only.
        </>
      }
      credential={() => ({
        kind: 'aws',
        accessKeyId: accessKeyId.trim(),
        secretAccessKey: secretAccessKey.trim(),
        ...(sessionToken.trim() ? { sessionToken: sessionToken.trim() } : {}),
        region: props.config.region,
        apiOrigin: props.config.api_origin,
      })}
      check={whoAmI}
      onSignedIn={props.onSignedIn}
    >
      <Field
        label="Access key id"
        name="access_key_id"
        value={accessKeyId}
        onInput={setAccessKeyId}
        required
      />
      <Field
        label="Secret access key"
        name="secret_access_key"
        type="password"
        value={secretAccessKey}
        onInput={setSecretAccessKey}
        required
      />
      <Field
        label="Session token"
        name="session_token"
        type="password"
        value={sessionToken}
        onInput={setSessionToken}
      />
    </CredentialForm>
  );
};

// ——— The app ———

const Console = () => {
  const route = useRoute();
  const config = useLoad(loadSiteConfig, []);
  const { api, who: me, signIn, signOut } = useSignedIn(['operator', 'aws'], whoAmI);
  if (!api) {
    return (
      <Frame product="Pricing console" nav={[]} current="" title="Sign in">
        {config.loading ? (
          <Loading />
        ) : config.data ? (
          <AwsSignIn config={config.data} onSignedIn={signIn} />
        ) : (
          <SignIn
            kind="operator"
            label="Operator token"
            hint="Your operator token (the local stack's banner lists them); it is kept in this tab only."
            check={whoAmI}
            onSignedIn={signIn}
          />
        )}
      </Frame>
    );
  }
  if (!me.data)
    return me.error ? (
      <Frame product="Pricing console" nav={[]} current="" title="Sign in">
        <Alert message={me.error} />
        <button type="button" onClick={signOut}>
          Sign in again
        </button>
      </Frame>
    ) : (
      <Loading />
    );
  const session: Session = { api, me: me.data };
  const [section = 'change-requests', id] = route;
  const page = (() => {
    switch (section) {
      case 'change-requests':
        return id ? <ChangeRequest session={session} crId={id} /> : <ChangeRequests session={session} />;
      case 'catalog':
        return <Catalog session={session} />;
      case 'deliveries':
        return id ? <EventDetail session={session} eventId={id} /> : <Deliveries session={session} />;
      case 'endpoints':
        return id ? <EndpointDetail session={session} endpointId={id} /> : <Endpoints session={session} />;
      case 'receipts':
        return <Receipts session={session} receiptId={id} />;
      case 'objectives':
        return <Objectives session={session} />;
      default:
        return undefined;
    }
  })();
  return (
    <Pages
      product="Pricing console"
      nav={NAV}
      route={route}
      section={section}
      id={id}
      who={`${me.data.identity} (${me.data.roles.join(', ')})`}
      onSignOut={signOut}
      page={page}
    />
  );
};

const root = document.getElementById('app');
if (root) render(<Console />, root);

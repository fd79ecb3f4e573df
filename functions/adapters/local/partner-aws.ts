import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetQueueUrlCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { EVENT_BUS_ARN, ROLE_ARN } from '../../domain/webhooks/destinations';

/**
 * The local twin of a partner's AWS account, for SQS and EventBridge destinations (C34): what the service calls in
 * the partner's account that fauxqs does not emulate, on one loopback port.
 *
 * - **IAM** (query protocol): `CreateRole`, `UpdateAssumeRolePolicy`, `GetRole`, `DeleteRole`: the partner's roles
 *   and their trust policies, in account `LOCAL_PARTNER_ACCOUNT`, kept in memory.
 * - **STS** (query protocol): `AssumeRole` as IAM evaluates a trust policy: an `Allow` statement for
 *   `sts:AssumeRole` whose `Principal.AWS` names the service's account (its id or `arn:aws:iam::<id>:root`) and
 *   whose conditions hold (`StringEquals` on `sts:ExternalId`; any other condition is not met). Otherwise
 *   `AccessDenied`, as AWS answers. The session's temporary credentials are remembered with their role.
 * - **EventBridge** (JSON 1.1, `AWSEvents.PutEvents`): only with a session's credentials, on a bus of that session's
 *   account (`AccessDeniedException` otherwise). Each entry becomes the EventBridge event (`version`, `id`,
 *   `detail-type`, `source`, `account`, `time`, `region`, `resources`, `detail`) sent to the fauxqs queue named
 *   like the bus: the stand-in for a rule targeting a queue. No such queue: `ResourceNotFoundException`.
 *
 * SQS destinations are fauxqs queues themselves (fauxqs does not check credentials).
 */
export const LOCAL_PARTNER_ACCOUNT = '111122223333';

export interface PartnerAwsOptions {
  /** The service's account: the principal a trust policy must name. */
  readonly serviceAccount: string;
  /** fauxqs, where buses deliver their events. */
  readonly sqs: SQSClient;
  readonly host?: string;
  readonly now?: () => Date;
}

export interface PartnerAws {
  readonly endpoint: string;
  stop(): Promise<void>;
}

interface Role {
  readonly arn: string;
  readonly name: string;
  readonly id: string;
  readonly path: string;
  readonly created: string;
  trust: string;
}

interface Assumed {
  readonly account: string;
  readonly roleArn: string;
  readonly expiresAtMs: number;
}

class TwinError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const xmlEscape = (value: string): string => value.replace(/[<>&'"]/g, (char) => `&#${char.charCodeAt(0)};`);

const xmlAnswer = (service: 'iam' | 'sts', action: string, result: string): string => {
  const namespace =
    service === 'iam'
      ? 'https://iam.amazonaws.com/doc/2010-05-08/'
      : 'https://sts.amazonaws.com/doc/2011-06-15/';
  return (
    `<${action}Response xmlns="${namespace}"><${action}Result>${result}</${action}Result>` +
    `<ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></${action}Response>`
  );
};

const roleXml = (role: Role): string =>
  `<Role><Path>${xmlEscape(role.path)}</Path><RoleName>${xmlEscape(role.name)}</RoleName><RoleId>${role.id}</RoleId>` +
  `<Arn>${xmlEscape(role.arn)}</Arn><CreateDate>${role.created}</CreateDate>` +
  `<AssumeRolePolicyDocument>${encodeURIComponent(role.trust)}</AssumeRolePolicyDocument></Role>`;

type Json = Record<string, unknown>;
const list = (value: unknown): unknown[] =>
  Array.isArray(value) ? value : value === undefined ? [] : [value];

/** Whether a trust policy lets the service's account assume the role with this external id (IAM's evaluation). */
export const trustAllows = (
  trust: string,
  serviceAccount: string,
  externalId: string | undefined,
): boolean => {
  let document: Json;
  try {
    document = JSON.parse(trust) as Json;
  } catch {
    return false;
  }
  const principals = new Set([serviceAccount, `arn:aws:iam::${serviceAccount}:root`]);
  const statements = list(document.Statement) as Json[];
  const matches = (statement: Json): boolean => {
    const actions = list(statement.Action).map(String);
    if (!actions.includes('sts:AssumeRole') && !actions.includes('sts:*') && !actions.includes('*'))
      return false;
    const principal = statement.Principal as Json | string | undefined;
    const named =
      principal === '*' ||
      (typeof principal === 'object' && list(principal.AWS).some((entry) => principals.has(String(entry))));
    if (!named) return false;
    const conditions = (statement.Condition ?? {}) as Record<string, Json>;
    return Object.entries(conditions).every(([operator, keys]) =>
      Object.entries(keys).every(
        ([key, wanted]) =>
          operator === 'StringEquals' &&
          key === 'sts:ExternalId' &&
          externalId !== undefined &&
          list(wanted).map(String).includes(externalId),
      ),
    );
  };
  const denied = statements.some((statement) => statement.Effect === 'Deny' && matches(statement));
  return !denied && statements.some((statement) => statement.Effect === 'Allow' && matches(statement));
};

const readText = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** The access key id a SigV4 `Authorization` header names. */
const accessKeyOf = (request: IncomingMessage): string | undefined =>
  /Credential=([^/,\s]+)\//.exec(String(request.headers.authorization ?? ''))?.[1];

export const startPartnerAws = async (options: PartnerAwsOptions): Promise<PartnerAws> => {
  const roles = new Map<string, Role>();
  const sessions = new Map<string, Assumed>();
  const now = options.now ?? (() => new Date());

  const iam = (form: URLSearchParams): string => {
    const action = form.get('Action') ?? '';
    const name = form.get('RoleName') ?? '';
    const found = [...roles.values()].find((role) => role.name === name);
    const existing = (): Role => {
      if (!found) throw new TwinError('NoSuchEntity', `The role with name ${name} cannot be found.`, 404);
      return found;
    };
    switch (action) {
      case 'CreateRole': {
        if (found) throw new TwinError('EntityAlreadyExists', `Role with name ${name} already exists.`, 409);
        const path = form.get('Path') ?? '/';
        const arn = `arn:aws:iam::${LOCAL_PARTNER_ACCOUNT}:role${path}${name}`;
        if (!ROLE_ARN.test(arn)) throw new TwinError('ValidationError', 'invalid role name or path');
        const role: Role = {
          arn,
          name,
          path,
          id: `AROA${randomBytes(8).toString('hex').toUpperCase()}`,
          created: now().toISOString(),
          trust: form.get('AssumeRolePolicyDocument') ?? '',
        };
        roles.set(arn, role);
        return xmlAnswer('iam', action, roleXml(role));
      }
      case 'GetRole':
        return xmlAnswer('iam', action, roleXml(existing()));
      case 'UpdateAssumeRolePolicy':
        existing().trust = form.get('PolicyDocument') ?? '';
        return xmlAnswer('iam', action, '');
      case 'DeleteRole':
        roles.delete(existing().arn);
        return xmlAnswer('iam', action, '');
      default:
        throw new TwinError('InvalidAction', `IAM ${action} is not emulated locally`, 501);
    }
  };

  const sts = (form: URLSearchParams): string => {
    const action = form.get('Action') ?? '';
    if (action !== 'AssumeRole')
      throw new TwinError('InvalidAction', `STS ${action} is not emulated locally`, 501);
    const roleArn = form.get('RoleArn') ?? '';
    const session = form.get('RoleSessionName') ?? '';
    const role = roles.get(roleArn);
    const externalId = form.get('ExternalId') ?? undefined;
    // AWS does not say whether the role exists: both are the same refusal.
    if (!role || !trustAllows(role.trust, options.serviceAccount, externalId))
      throw new TwinError(
        'AccessDenied',
        `User: arn:aws:iam::${options.serviceAccount}:root is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`,
        403,
      );
    const seconds = Number(form.get('DurationSeconds') ?? 3600);
    const expiresAtMs = now().getTime() + seconds * 1000;
    const accessKeyId = `ASIA${randomBytes(8).toString('hex').toUpperCase()}`;
    sessions.set(accessKeyId, { account: LOCAL_PARTNER_ACCOUNT, roleArn, expiresAtMs });
    return xmlAnswer(
      'sts',
      action,
      `<Credentials><AccessKeyId>${accessKeyId}</AccessKeyId><SecretAccessKey>${randomBytes(20).toString('base64')}` +
        `</SecretAccessKey><SessionToken>${randomBytes(48).toString('base64')}</SessionToken>` +
        `<Expiration>${new Date(expiresAtMs).toISOString()}</Expiration></Credentials>` +
        `<AssumedRoleUser><AssumedRoleId>${role.id}:${xmlEscape(session)}</AssumedRoleId>` +
        `<Arn>arn:aws:sts::${LOCAL_PARTNER_ACCOUNT}:assumed-role/${xmlEscape(role.name)}/${xmlEscape(session)}</Arn>` +
        '</AssumedRoleUser>',
    );
  };

  const putEvents = async (request: IncomingMessage, body: Json): Promise<Json> => {
    const session = sessions.get(accessKeyOf(request) ?? '');
    if (!session || session.expiresAtMs <= now().getTime())
      throw new TwinError(
        'UnrecognizedClientException',
        'The security token included in the request is invalid.',
      );
    // A session of a role since deleted acts as nothing (the role's policies are gone with it).
    if (!roles.has(session.roleArn))
      throw new TwinError('AccessDeniedException', `${session.roleArn} no longer exists.`);
    const results: Json[] = [];
    for (const entry of list(body.Entries) as Json[]) {
      const bus = EVENT_BUS_ARN.exec(String(entry.EventBusName ?? ''));
      if (!bus) throw new TwinError('ValidationException', 'EventBusName must be an event bus ARN locally');
      const [, region, account, name] = bus as unknown as [string, string, string, string];
      if (account !== session.account)
        throw new TwinError(
          'AccessDeniedException',
          `${session.roleArn} is not authorized to perform: events:PutEvents on resource: ${entry.EventBusName}`,
        );
      let queueUrl: string | undefined;
      try {
        queueUrl = (await options.sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
      } catch {
        queueUrl = undefined;
      }
      if (!queueUrl) throw new TwinError('ResourceNotFoundException', `Event bus ${name} does not exist.`);
      let detail: unknown;
      try {
        detail = JSON.parse(String(entry.Detail ?? ''));
      } catch {
        results.push({ ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' });
        continue;
      }
      const id = randomUUID();
      const time = typeof entry.Time === 'number' ? new Date(entry.Time * 1000) : now();
      await options.sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify({
            version: '0',
            id,
            'detail-type': entry.DetailType,
            source: entry.Source,
            account,
            time: `${time.toISOString().slice(0, 19)}Z`,
            region,
            resources: entry.Resources ?? [],
            detail,
          }),
        }),
      );
      results.push({ EventId: id });
    }
    return { FailedEntryCount: results.filter((result) => result.ErrorCode).length, Entries: results };
  };

  const server = createServer((request, response: ServerResponse) => {
    const target = String(request.headers['x-amz-target'] ?? '');
    const handle = async (): Promise<void> => {
      const text = await readText(request);
      if (target.startsWith('AWSEvents.')) {
        if (target !== 'AWSEvents.PutEvents')
          throw new TwinError(
            'UnsupportedOperation',
            `EventBridge ${target.slice(10)} is not emulated locally`,
            501,
          );
        const answer = await putEvents(request, JSON.parse(text || '{}') as Json);
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(answer));
        return;
      }
      const form = new URLSearchParams(text);
      // Query-protocol calls name their API version: IAM's 2010-05-08, STS's 2011-06-15.
      const answer = form.get('Version') === '2010-05-08' ? iam(form) : sts(form);
      response.writeHead(200, { 'content-type': 'text/xml' }).end(answer);
    };
    handle().catch((error: unknown) => {
      const twinError =
        error instanceof TwinError ? error : new TwinError('InternalFailure', (error as Error).message, 500);
      if (target.startsWith('AWSEvents.')) {
        response
          .writeHead(twinError.status, { 'content-type': 'application/x-amz-json-1.1' })
          .end(JSON.stringify({ __type: twinError.code, message: twinError.message }));
        return;
      }
      response
        .writeHead(twinError.status, { 'content-type': 'text/xml' })
        .end(
          `<ErrorResponse><Error><Type>Sender</Type><Code>${twinError.code}</Code><Message>${xmlEscape(twinError.message)}` +
            `</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
        );
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

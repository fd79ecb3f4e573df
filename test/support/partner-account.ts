/**
 * A partner's side of an SQS or EventBridge destination on the local stack: its role in the partner account's twin
 * (IAM's query API, as `aws iam create-role --endpoint-url` sends it) with the trust policy the service asks for.
 */

/** The trust policy a partner gives its role: the service's principal may assume it with the endpoint's external id. */
export const trustPolicy = (principal: string, externalId: string): string =>
  JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { AWS: principal },
        Action: 'sts:AssumeRole',
        Condition: { StringEquals: { 'sts:ExternalId': externalId } },
      },
    ],
  });

const iamCall = async (endpoint: string, params: Record<string, string>): Promise<string> => {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...params, Version: '2010-05-08' }).toString(),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`IAM ${params.Action}: ${response.status} ${text}`);
  return text;
};

/** Creates the role; returns its ARN. */
export const createPartnerRole = async (endpoint: string, name: string, trust: string): Promise<string> => {
  const answer = await iamCall(endpoint, {
    Action: 'CreateRole',
    RoleName: name,
    AssumeRolePolicyDocument: trust,
  });
  const arn = /<Arn>([^<]+)<\/Arn>/.exec(answer)?.[1];
  if (!arn) throw new Error(`CreateRole answered no ARN: ${answer}`);
  return arn;
};

export const updatePartnerTrust = (endpoint: string, name: string, trust: string): Promise<string> =>
  iamCall(endpoint, { Action: 'UpdateAssumeRolePolicy', RoleName: name, PolicyDocument: trust });

export const deletePartnerRole = (endpoint: string, name: string): Promise<string> =>
  iamCall(endpoint, { Action: 'DeleteRole', RoleName: name });

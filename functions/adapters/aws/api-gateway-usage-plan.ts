import {
  type APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
import type { CallerUsagePlan } from '../../ports/usage-plan';

const nameOf = (usageIdentifier: string) => `caller-${usageIdentifier}`;
const errorName = (error: unknown) => (error as Error | undefined)?.name;

/**
 * Caller keys' usage identifiers as API keys of the caller usage plan, found by its name (its id cannot reach
 * the function: the API's methods depend on it). Each API key is named `caller-<identifier>` and holds the
 * identifier as its value (a digest, never the caller's key), so a repeat finds what an earlier attempt made.
 */
export class ApiGatewayCallerUsagePlan implements CallerUsagePlan {
  #planId: Promise<string> | undefined;

  constructor(
    private readonly client: APIGatewayClient,
    private readonly planName: string,
  ) {}

  private planId(): Promise<string> {
    this.#planId ??= this.findPlan().catch((error: unknown) => {
      this.#planId = undefined;
      throw error;
    });
    return this.#planId;
  }

  private async findPlan(): Promise<string> {
    let position: string | undefined;
    do {
      const page = await this.client.send(new GetUsagePlansCommand({ limit: 500, position }));
      const plan = page.items?.find((item) => item.name === this.planName);
      if (plan?.id) return plan.id;
      position = page.position;
    } while (position);
    throw new Error(`no usage plan named ${this.planName}`);
  }

  private async keyIdsNamed(usageIdentifier: string): Promise<string[]> {
    const name = nameOf(usageIdentifier);
    const page = await this.client.send(new GetApiKeysCommand({ nameQuery: name, limit: 25 }));
    return (page.items ?? [])
      .filter((item) => item.name === name && item.id)
      .map((item) => item.id as string);
  }

  async register(usageIdentifier: string): Promise<void> {
    const usagePlanId = await this.planId();
    let keyId: string | undefined;
    try {
      keyId = (
        await this.client.send(
          new CreateApiKeyCommand({ name: nameOf(usageIdentifier), value: usageIdentifier, enabled: true }),
        )
      ).id;
    } catch (error) {
      // An earlier attempt created it (a retry after a crash): use that one.
      if (errorName(error) !== 'ConflictException') throw error;
      [keyId] = await this.keyIdsNamed(usageIdentifier);
    }
    if (!keyId) throw new Error('API Gateway created an API key without an id');
    try {
      await this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId, keyType: 'API_KEY' }));
    } catch (error) {
      if (errorName(error) !== 'ConflictException') throw error;
    }
  }

  async remove(usageIdentifiers: readonly string[]): Promise<void> {
    for (const usageIdentifier of usageIdentifiers) {
      for (const apiKey of await this.keyIdsNamed(usageIdentifier)) {
        try {
          await this.client.send(new DeleteApiKeyCommand({ apiKey }));
        } catch (error) {
          if (errorName(error) !== 'NotFoundException') throw error;
        }
      }
    }
  }
}

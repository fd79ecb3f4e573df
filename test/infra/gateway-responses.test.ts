import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../functions/handlers/middleware/errors';
import { c6Template, GATEWAY_REFUSALS } from '../../lib/constructs/service-api';
import { synthesizedApp } from './fixture';

const app = synthesizedApp();

describe("API Gateway's own refusals (C6)", () => {
  it('answer every refusal type in the C6 shape with the status its error code has', () => {
    const responses = Object.values(app.service().findResources('AWS::ApiGateway::GatewayResponse'));
    const byType = new Map(
      responses.map((resource) => [
        String(resource.Properties.ResponseType),
        resource.Properties as Record<string, unknown>,
      ]),
    );
    for (const refusal of Object.values(GATEWAY_REFUSALS)) {
      const response = byType.get(refusal.type.responseType) ?? {};
      expect(response.StatusCode, refusal.type.responseType).toBe(String(ERROR_STATUS[refusal.error]));
      const template = (response.ResponseTemplates as Record<string, string>)['application/json'] ?? '';
      expect(template).toBe(c6Template(refusal.error, refusal.description));
      // The template is JSON once API Gateway fills in its request id.
      expect(JSON.parse(template.replace('$context.requestId', 'req-1'))).toEqual({
        error: refusal.error,
        error_description: refusal.description,
        trace_id: 'req-1',
      });
      expect(
        (response.ResponseParameters as Record<string, string>)['gatewayresponse.header.X-Trace-Id'],
      ).toBe('context.requestId');
    }
    const throttled = byType.get('THROTTLED') ?? {};
    const throttledHeaders = throttled.ResponseParameters as Record<string, string>;
    expect(throttledHeaders['gatewayresponse.header.Retry-After']).toBe("'1'");
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withMatrix } from '../../../bin/security-matrix';
import {
  accessOf,
  CREDENTIALS,
  parseAuthorizationMatrix,
  type RouteDefinition,
  renderAuthorizationMatrix,
  ROUTES as TABLE,
} from '../../../functions/definitions';

const ROUTES: readonly RouteDefinition[] = TABLE;

const SECURITY_FILE = path.resolve(import.meta.dirname, '../../../docs/security.md');

describe('the route table authorizes every route', () => {
  it('gives every api_key route its scopes, every admin route its roles, and no other route either', () => {
    for (const route of ROUTES) {
      const label = `${route.method} ${route.path}`;
      if (route.auth === 'api_key') expect(route.scopes?.length, label).toBeGreaterThan(0);
      else expect(route.scopes, label).toBeUndefined();
      if (route.auth === 'admin') expect(route.roles?.length, label).toBeGreaterThan(0);
      else expect(route.roles, label).toBeUndefined();
    }
  });

  it('lets nothing but approvers approve, and auditors only read', () => {
    for (const route of ROUTES.filter((candidate) => candidate.auth === 'admin')) {
      if (route.roles?.includes('approver') && route.method !== 'GET')
        expect(route.roles, route.path).toEqual(['approver']);
      if (route.roles?.includes('auditor')) expect(route.method, route.path).toBe('GET');
    }
    const machine = CREDENTIALS.find((credential) => credential.kind === 'machine');
    const approve = ROUTES.find((route) => route.operation === 'approveChangeRequest');
    if (!machine || !approve) throw new Error('the matrix has a machine column and an approve route');
    expect(accessOf(approve, machine)).toBe(403);
  });
});

describe('docs/security.md', () => {
  it('holds the authorization matrix the route table gives (npm run security-matrix)', () => {
    const committed = readFileSync(SECURITY_FILE, 'utf8');
    expect(withMatrix(committed) === committed, 'the matrix is stale: run `npm run security-matrix`').toBe(
      true,
    );
  });

  it('reads back to what it was rendered from', () => {
    const matrix = parseAuthorizationMatrix(renderAuthorizationMatrix());
    expect(matrix.size).toBe(ROUTES.length);
    for (const route of ROUTES) {
      for (const credential of CREDENTIALS) {
        expect(matrix.get(`${route.method} ${route.path}`)?.get(credential.kind)).toBe(
          accessOf(route, credential),
        );
      }
    }
    expect(() => parseAuthorizationMatrix('no markers')).toThrow(/markers/);
  });
});
